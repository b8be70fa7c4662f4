from __future__ import annotations

import re

import pytest

from ragaliq.text.citations import CitationReader, cited_chunks, without_citations


def read(text: str, chunks: int = 3, ids=(), pattern: str | None = None):
    reader = CitationReader.of(
        chunks=chunks, ids=ids, pattern=re.compile(pattern) if pattern else None
    )
    return reader.find(text)


@pytest.mark.parametrize(
    ("text", "chunks"),
    [
        pytest.param("Plots cost 40 euros [2].", (2,), id="a number in range"),
        pytest.param("Plots cost 40 euros [1][3].", (1, 3), id="two markers"),
        pytest.param("Plots cost 40 euros [3, 1].", (1, 3), id="two references in one"),
        pytest.param("Plots cost 40 euros [sic].", (), id="[sic] names no chunk"),
        pytest.param("The shed was built in [2019].", (), id="[2019] is out of range"),
        pytest.param("Plots cost 40 euros [4].", (), id="one past the last chunk"),
        pytest.param("Plots cost 40 euros [0].", (), id="numbers start at 1"),
        pytest.param("Plots cost 40 euros.", (), id="no marker"),
    ],
)
def test_numbered_markers(text, chunks):
    assert cited_chunks(read(text)) == chunks


def test_a_known_id_cites_its_chunk_and_an_unknown_one_does_not():
    ids = ("fees-1", None, "water-1")
    assert cited_chunks(read("Water runs in summer [water-1].", ids=ids)) == (3,)
    assert cited_chunks(read("Water runs in summer [water-9].", ids=ids)) == ()
    assert cited_chunks(read("Plots cost 40 euros [2].", ids=ids)) == (2,)  # numbers still read


def test_an_id_wins_over_a_number_that_reads_the_same_and_a_repeated_id_is_its_first_chunk():
    ids = ("3", "a", "a")
    assert cited_chunks(read("X [3].", ids=ids)) == (1,)
    assert cited_chunks(read("X [a].", ids=ids)) == (2,)


def test_a_marker_keeps_only_the_references_that_name_chunks():
    (citation,) = read("Plots cost 40 euros [sic, 2, 2].")
    assert (citation.marker, citation.chunks) == ("[sic, 2, 2]", (2,))


def test_a_pattern_of_its_own():
    pattern = r"\(source: ([\w-]+)\)"
    text = "Plots cost 40 euros (source: fees-1). Water runs in summer [2]."
    assert cited_chunks(read(text, ids=("fees-1", "b"), pattern=pattern)) == (1,)
    no_group = r"\^\d+"  # no group: the whole match is the reference
    assert cited_chunks(read("Plots cost 40 euros ^2.", pattern=no_group)) == ()
    assert cited_chunks(read("Plots cost 40 euros ^2.", ids=("^2",), pattern=no_group)) == (1,)


def test_without_citations_keeps_what_the_text_states():
    text = "Plots cost 40 euros [1][3] and water runs in summer [2]. The shed is old [sic]."
    assert without_citations(text, read(text)) == (
        "Plots cost 40 euros and water runs in summer. The shed is old [sic]."
    )
    assert without_citations("No marker.", []) == "No marker."
