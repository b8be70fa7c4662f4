"""The word lists the text readers share.

Weekdays and months with their abbreviations, and the irregular forms stemming cannot reach.
"""

from __future__ import annotations

IRREGULAR = """
arise arose arisen | awake awoke awoken | beat beaten | become became | begin began begun |
bend bent | bleed bled | blow blew blown | break broke broken | breed bred | bring brought |
build built | burn burnt | buy bought | catch caught | choose chose chosen | cling clung |
come came | creep crept | deal dealt | dig dug | draw drew drawn | drink drank drunk |
drive drove driven | eat ate eaten | fall fell fallen | feed fed | fight fought | flee fled |
fly flew flown | forbid forbade forbidden | forget forgot forgotten | forgive forgave forgiven |
freeze froze frozen | get got gotten | give gave given | go went gone | grow grew grown |
hang hung | hear heard | hide hid hidden | hold held | keep kept | kneel knelt | know knew known |
lay laid | lean leant | learn learnt | lend lent | light lit | lose lost | make made |
mean meant | meet met | pay paid | prove proven | ride rode ridden | ring rang rung | rise risen |
run ran | see seen | seek sought | sell sold | send sent | shake shook shaken | shine shone |
show shown | shrink shrank shrunk | sing sang sung | sink sank sunk | sit sat | sleep slept |
slide slid | speak spoke spoken | speed sped | spend spent | spin spun | spring sprang sprung |
stand stood | steal stole stolen | stick stuck | sting stung | strike struck stricken |
swear swore sworn | sweep swept | swim swam swum | swing swung | take took taken |
teach taught | tear torn | tell told | think thought | throw threw thrown |
understand understood | undertake undertook undertaken | wake woke woken | wear wore worn |
weave wove woven | weep wept | win won | withdraw withdrew withdrawn | write wrote written |
child children | man men | woman women | foot feet | tooth teeth | mouse mice | goose geese
"""
"""Irregular forms, each group read as its first word ("sold" is "sell", "worn" is "wear").
Forms that are also common words of their own are left out ("left", "found", "saw", "felt",
"rose", "led", "ground", "bound", "shot")."""


IRREGULAR_FORMS = {
    form: group.split()[0]
    for group in IRREGULAR.replace("\n", " ").split("|")
    for form in group.split()[1:]
}
"""Each irregular form, to its base form ("sold" to "sell")."""


CALENDAR = {
    **{day: day for day in "monday tuesday wednesday thursday friday saturday sunday".split()},
    **{month: month for month in (
        "january february march april may june july august september october november december"
    ).split()},
    "mon": "monday", "tue": "tuesday", "tues": "tuesday", "wed": "wednesday", "weds": "wednesday",
    "thu": "thursday", "thur": "thursday", "thurs": "thursday", "fri": "friday",
    "sat": "saturday", "sun": "sunday", "jan": "january", "feb": "february", "mar": "march",
    "apr": "april", "jun": "june", "jul": "july", "aug": "august", "sep": "september",
    "sept": "september", "oct": "october", "nov": "november", "dec": "december",
}  # fmt: skip
"""Weekdays and months, and their abbreviations, each read as the full name: dates, not names."""


CALENDAR_HINTS = tuple(
    "mon tue wed thu fri sat sun jan feb mar apr may jun jul aug sep oct nov dec".split()
)
"""The first letters of every weekday and month, lower case: a text without any of them names
none (a quick test before the full pattern)."""
