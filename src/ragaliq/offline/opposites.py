"""Words and their opposites, as the offline judge reads a claim that says otherwise.

Each line of :data:`OPPOSITES` is a group of words that exclude each other ("full | partial");
:func:`alternative` says which group and side a word's key belongs to.
"""

from __future__ import annotations

from ragaliq.text.words import word_key

OPPOSITES = """
full | partial
free | paid / chargeable
included | excluded
include | exclude
allowed / permitted | prohibited / forbidden / banned
accepted | rejected / declined / refused
approved | rejected / denied
win / won | lose / lost
winner | loser
victory | defeat
increase / increased / grow / grew | decrease / decreased / decline / shrink / shrank
rise / rose | fall / fell / drop / dropped
gain | loss
profit | loss
surplus | deficit
higher / highest | lower / lowest
maximum | minimum
early / earlier / earliest | late / later / latest
open / opened | closed / shut
online | offline
public | private
internal | external
domestic | international / foreign
buyer | seller
arrival / arrive | departure / depart
entry / entrance | exit
enable / enabled | disable / disabled
active | inactive
available | unavailable
valid | invalid / expired
legal | illegal
possible | impossible
likely | unlikely
safe | unsafe / dangerous
secure | insecure
success / succeeded / successful | failure / failed / unsuccessful
true | false
correct | incorrect
agree / agreed | disagree / disagreed
support / supported | oppose / opposed
majority | minority
upper | lower
inside / indoor / indoors | outside / outdoor / outdoors
north / northern | south / southern
east / eastern | west / western
male | female
men / man | women / woman
boy / boys | girl / girls
husband | wife
father | mother
son | daughter
brother | sister
new | used / secondhand / refurbished
hot | cold
warm | cool
heating | cooling
wet | dry
strong | weak
fast / faster / quick / quicker | slow / slower
high | low
long / longer | short / shorter
large / larger / big / bigger | small / smaller
wide / wider | narrow / narrower
cheap / cheaper | expensive
rich | poor
easy / easier | difficult / hard / harder
simple | complex / complicated
positive | negative
guilty / convicted | innocent / acquitted
alive | dead
add / added | remove / removed
connect / connected | disconnect / disconnected
lock / locked | unlock / unlocked
wired | wireless
manual / manually | automatic / automatically
analog / analogue | digital
mandatory / compulsory / required | optional / voluntary
permanent / permanently | temporary / temporarily
refundable | nonrefundable / non-refundable
best | worst
better | worse
upgrade | downgrade
upload | download
inbound / incoming | outbound / outgoing
employer | employee
landlord | tenant
lender | borrower
credit | debit
deposit | withdrawal
income | expense
urban | rural
morning | afternoon | evening
spring | summer | autumn | winter
hourly | daily | weekly | monthly | quarterly | annual / annually / yearly
red | green | blue | yellow | black | white | orange | purple | grey / gray
"""
"""Words that exclude one another, one group per line (alternatives split by ``|``, spellings of
one alternative by ``/``): general enough for product, policy and news text. A claim using one
alternative where the closest context sentence uses another, next to a word both share on the
same side, says the opposite of the context. Converses are left out ("buy" and "sell", "import"
and "export" say the same thing from the other side)."""


def _groups(table: str) -> dict[str, tuple[int, int]]:
    """Each word key to its group and its alternative within the group."""
    found: dict[str, tuple[int, int]] = {}
    for group, line in enumerate(line for line in table.splitlines() if line.strip()):
        for alternative, spellings in enumerate(line.split("|")):
            for spelling in spellings.split("/"):
                found.setdefault(word_key(spelling.strip().lower()), (group, alternative))
    return found


ALTERNATIVES = _groups(OPPOSITES)


def alternative(key: str) -> tuple[int, int] | None:
    """A word key's group in :data:`OPPOSITES` and its alternative there, or None."""
    return ALTERNATIVES.get(key)
