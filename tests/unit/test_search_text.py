"""searchable_text: the words of a stored message the full-text index holds (not its JSON)."""

from __future__ import annotations

import base64
import json

from hypothesis import given
from hypothesis import strategies as st

from app.core.store.search_text import MAX_TOOL_TEXT, searchable_text

PNG = base64.b64encode(bytes(range(256)) * 8).decode()


def test_a_plain_string_message_is_its_own_text():
    assert searchable_text("the quick marmalade fox") == "the quick marmalade fox"


def test_text_blocks_tool_names_inputs_and_results_are_kept_keys_and_types_are_not():
    content = [
        {"type": "text", "text": "Let me look"},
        {"type": "tool_use", "id": "toolu_01A", "name": "grep_search",
         "input": {"pattern": "needle", "options": {"paths": ["src/a.py", "docs"]},
                   "limit": 5}},
        {"type": "tool_result", "tool_use_id": "toolu_01A", "is_error": False,
         "content": [{"type": "text", "text": "3 matches"},
                     {"type": "image", "source": {"type": "base64", "media_type": "image/png",
                                                  "data": PNG}}]},
    ]
    words = searchable_text(content).split()
    assert words == ["Let", "me", "look", "grep_search", "needle", "src/a.py", "docs", "3",
                     "matches"]


def test_thinking_signatures_redacted_data_and_images_are_not_kept():
    content = [{"type": "thinking", "thinking": "hmm", "signature": "EqQBCkYIBxgCKkB"},
               {"type": "redacted_thinking", "data": "EmwKAhgBEgy3va"},
               {"type": "image", "source": {"type": "base64", "media_type": "image/png",
                                            "data": PNG}},
               {"type": "text", "text": "done"}]
    assert searchable_text(content) == "done"


def test_documents_keep_their_title_and_plain_text_not_their_base64():
    pdf = {"type": "document", "title": "Quarterly plan",
           "source": {"type": "base64", "media_type": "application/pdf", "data": PNG}}
    txt = {"type": "document", "source": {"type": "text", "media_type": "text/plain",
                                          "data": "minutes of the meeting"}}
    assert searchable_text([pdf, txt]) == "Quarterly plan\nminutes of the meeting"


def test_base64_pasted_into_text_or_a_tool_result_is_dropped_words_around_it_stay():
    assert searchable_text(f"see data:image/png;base64,{PNG} above").split() == [
        "see", "data:image/png;base64,", "above"]
    result = [{"type": "tool_result", "tool_use_id": "t", "content": f"blob {PNG} end"}]
    assert searchable_text(result).split() == ["blob", "end"]


def test_tool_inputs_and_results_are_bounded():
    big = "word " * MAX_TOOL_TEXT
    content = [{"type": "tool_use", "id": "t", "name": "write_file",
                "input": {"path": "a.txt", "content": big}},
               {"type": "tool_result", "tool_use_id": "t", "content": big}]
    text = searchable_text(content)
    assert len(text) <= 2 * MAX_TOOL_TEXT + len("write_file a.txt") + 10
    assert text.startswith("write_file\na.txt\nword word")


def test_unknown_block_types_keep_their_text_only():
    content = [{"type": "server_tool_use", "text": "found it", "id": "srv_1"},
               {"no_type": True}, 42, None, "loose string"]
    assert searchable_text(content) == "found it\nloose string"


def test_malformed_content_gives_no_text_and_never_raises():
    for content in (None, 3, 2.5, True, {"type": "text", "text": "x"}, [[["deep"]]],
                    [{"type": "tool_use", "name": 7, "input": "just a string"}],
                    [{"type": "tool_result", "content": {"weird": "shape"}}]):
        assert isinstance(searchable_text(content), str)
    assert searchable_text([{"type": "tool_use", "name": None, "input": "plain"}]) == "plain"


def test_deeply_nested_tool_input_does_not_recurse_without_bound():
    nested: object = "bottom"
    for _ in range(5000):
        nested = {"k": [nested]}
    text = searchable_text([{"type": "tool_use", "name": "t", "input": nested}])
    assert text == "t"  # the value below the depth bound is not walked


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda children: st.lists(children, max_size=4)
    | st.dictionaries(st.text(max_size=8), children, max_size=4),
    max_leaves=30)


@given(content=_JSON)
def test_any_json_gives_a_string(content):
    assert isinstance(searchable_text(json.loads(json.dumps(content))), str)


# Keys in upper case, values in lower case: no upper-case letter may reach the index.
_KEY = st.text(alphabet="ABCDEFGH", min_size=1, max_size=6)
_VALUE = st.text(alphabet="abcdefgh ", max_size=12)
_INPUT = st.recursive(_VALUE, lambda children: st.lists(children, max_size=3)
                      | st.dictionaries(_KEY, children, max_size=3), max_leaves=20)


@given(tool_input=st.dictionaries(_KEY, _INPUT, max_size=4), result=_VALUE)
def test_tool_input_keys_never_reach_the_index(tool_input, result):
    content = [{"type": "tool_use", "id": "TOOLU", "name": "tool", "input": tool_input},
               {"type": "tool_result", "tool_use_id": "TOOLU", "content": result}]
    text = searchable_text(content)
    assert text == text.lower()
    assert text.startswith("tool")
