"""Property: random request bodies of each API, built from the grammar the relay accepts plus
mutations (unknown fields, unknown parts, parts given by URL in every spelling, parts carrying their
own data), judged against the web-access rule. With web access off no byte that leaves for the
provider holds a part given by URL or anything unknown; with it on every part given by URL passes;
a part's own data always passes. Random JSON never makes the reading fail but with a refusal."""
from __future__ import annotations

import json
import re
import string

from hypothesis import given, settings
from hypothesis import strategies as st

from bot.relay import body_policy
from bot.relay.body_policy import BodyRefused

FETCH, UNKNOWN, DATA = "fetchmark", "UNKNOWNMARK", "DATAMARK"
FOUND = re.compile(rf"({FETCH}\d+|{DATA}\d+)")
SETTINGS = settings(max_examples=150, deadline=None)

_ids = st.integers(min_value=0, max_value=10**6)
_text = st.text(string.ascii_letters + " .,", max_size=20)
_unknown_name = st.text(string.ascii_lowercase + "_", min_size=1, max_size=12).map(lambda s: f"zz_{s}")


def _url(n: int, form: int) -> str:
    host = f"{FETCH}{n}.example"
    return [f"https://{host}/a.png", f"HTTP://{host}/a", f"  https://{host}", f"gs://{host}/b", f"//{host}/c",
            f"www.{host}/d", f"ftp://{host}/e", f"https:\\\\{host}"][form]


urls = st.builds(_url, _ids, st.integers(min_value=0, max_value=7))
datas = _ids.map(lambda n: f"{DATA}{n}")
data_urls = _ids.map(lambda n: f"data:image/png;base64,{DATA}{n}")
unknown_values = st.sampled_from([f"https://{UNKNOWN}.example/x", UNKNOWN, {"url": f"https://{UNKNOWN}.example"}])


@st.composite
def _with_unknown_keys(draw, part_strategy):
    """A known part with, sometimes, keys the grammar does not declare (an address smuggled in one)."""
    part = dict(draw(part_strategy))
    for name in draw(st.lists(_unknown_name, max_size=2)):
        part[name] = draw(unknown_values)
    return part


def _unknown_part(kind_key: str = "type"):
    return st.builds(lambda name, value: {kind_key: name, "source": value}, _unknown_name, unknown_values)


def _request(known: dict, body: st.SearchStrategy) -> st.SearchStrategy:
    """A request: its required body, some optional known fields, some unknown ones."""
    return st.builds(lambda base, optional, unknown: {**optional, **unknown, **base}, body,
                     st.fixed_dictionaries({}, optional=known),
                     st.dictionaries(_unknown_name, unknown_values, max_size=3))


# ---------------------------------------------------------------- Anthropic Messages

_A_LEAF = st.one_of(
    st.builds(lambda t: {"type": "text", "text": t}, _text),
    st.builds(lambda d: {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": d}}, datas),
    st.builds(lambda k, u: {"type": k, "source": {"type": "url", "url": u}}, st.sampled_from(["image", "document"]),
              urls),
    st.builds(lambda u: {"type": "image", "source": {"type": "file", "file_id": u}}, urls),
    _unknown_part(),
)
_A_PART = st.one_of(_with_unknown_keys(_A_LEAF), st.builds(
    lambda parts: {"type": "tool_result", "tool_use_id": "t1", "content": parts}, st.lists(_A_LEAF, max_size=3)))
ANTHROPIC = _request(
    {"system": st.one_of(_text, st.lists(_A_LEAF, max_size=2)), "stream": st.booleans(),
     "metadata": st.just({"user_id": "u"}), "temperature": st.floats(0, 1)},
    st.fixed_dictionaries({"model": st.just("claude-opus-4-8"), "max_tokens": st.integers(1, 1000),
                           "messages": st.lists(st.fixed_dictionaries({
                               "role": st.sampled_from(["user", "assistant"]),
                               "content": st.one_of(_text, st.lists(_A_PART, max_size=4))}), max_size=4)}))

# ---------------------------------------------------------------- Chat Completions

_C_PART = _with_unknown_keys(st.one_of(
    st.builds(lambda t: {"type": "text", "text": t}, _text),
    st.builds(lambda u: {"type": "image_url", "image_url": {"url": u, "detail": "auto"}}, st.one_of(urls, data_urls)),
    st.builds(lambda d: {"type": "file", "file": {"filename": "a.pdf", "file_data": d}}, st.one_of(urls, datas)),
    st.builds(lambda u: {"type": "file", "file": {"file_id": u}}, urls),
    _unknown_part(),
))
CHAT = _request(
    {"stream": st.booleans(), "temperature": st.floats(0, 1), "max_tokens": st.integers(1, 100),
     "tools": st.just([{"type": "function", "function": {"name": "f", "parameters": {}}}])},
    st.fixed_dictionaries({"model": st.just("gpt-5.5"), "messages": st.lists(st.fixed_dictionaries({
        "role": st.sampled_from(["user", "system", "tool"]),
        "content": st.one_of(_text, st.lists(_C_PART, max_size=4))}), max_size=4)}))

# ---------------------------------------------------------------- Responses

_R_PART = _with_unknown_keys(st.one_of(
    st.builds(lambda t: {"type": "input_text", "text": t}, _text),
    st.builds(lambda u: {"type": "input_image", "image_url": u}, st.one_of(urls, data_urls)),
    st.builds(lambda u: {"type": "input_file", "file_url": u}, urls),
    st.builds(lambda d: {"type": "input_file", "filename": "a.pdf", "file_data": d}, st.one_of(datas, data_urls)),
    st.builds(lambda u: {"type": "input_image", "file_id": u}, urls),
    _unknown_part(),
))
_R_ITEM = st.one_of(
    st.builds(lambda role, parts: {"type": "message", "role": role, "content": parts},
              st.sampled_from(["user", "developer"]), st.lists(_R_PART, max_size=4)),
    st.builds(lambda parts: {"role": "user", "content": parts}, st.lists(_R_PART, max_size=3)),
    st.builds(lambda parts: {"type": "function_call_output", "call_id": "c1", "output": parts},
              st.one_of(_text, st.lists(_R_PART, max_size=3))),
    _unknown_part(),
)
RESPONSES = _request(
    {"stream": st.booleans(), "store": st.booleans(), "instructions": _text, "reasoning": st.just({"effort": "low"})},
    st.fixed_dictionaries({"model": st.just("gpt-5.5"), "input": st.one_of(_text, st.lists(_R_ITEM, max_size=4))}))

# ---------------------------------------------------------------- Gemini

# a Gemini part is told apart by its one data field: an unknown key beside it makes the part unknown
_G_LEAF = st.one_of(
    _with_unknown_keys(st.builds(lambda t: {"text": t}, _text)),
    st.builds(lambda d: {"inlineData": {"mimeType": "image/png", "data": d}}, datas),
    st.builds(lambda u: {"fileData": {"mimeType": "image/png", "fileUri": u}}, urls),
    st.builds(lambda u: {"file_data": {"mime_type": "image/png", "file_uri": u}}, urls),
    st.builds(lambda name, value: {name: value}, _unknown_name, unknown_values),
)
_G_PART = st.one_of(_G_LEAF, st.builds(
    lambda parts: {"functionResponse": {"name": "f", "response": {"ok": True}, "parts": parts}},
    st.lists(_G_LEAF, max_size=3)))
GEMINI = _request(
    {"systemInstruction": st.just({"parts": [{"text": "be brief"}]}),
     "generationConfig": st.just({"maxOutputTokens": 100})},
    st.fixed_dictionaries({"contents": st.lists(st.fixed_dictionaries({
        "role": st.sampled_from(["user", "model"]), "parts": st.lists(_G_PART, max_size=4)}), max_size=4)}))

BODIES = {"anthropic": ANTHROPIC, "chat": CHAT, "responses": RESPONSES, "gemini": GEMINI}


def _sent(api: str, body: dict, web_access: bool) -> str:
    checked = body_policy.check(api, json.dumps(body).encode(), [], web_access=web_access,
                                model="gemini-2.5-flash" if api == "gemini" else None)
    return checked.body.decode()


def _marks(text: str, mark: str) -> set[str]:
    return {found for found in FOUND.findall(text) if found.startswith(mark)}


def _test_web_off(api: str):
    @SETTINGS
    @given(BODIES[api])
    def test(body):
        sent = _sent(api, body, web_access=False)
        assert FETCH not in sent and UNKNOWN not in sent
        assert _marks(sent, DATA) == _marks(json.dumps(body), DATA)
    return test


def _test_web_on(api: str):
    @SETTINGS
    @given(BODIES[api])
    def test(body):
        sent = _sent(api, body, web_access=True)
        assert UNKNOWN not in sent
        assert set(FOUND.findall(sent)) == set(FOUND.findall(json.dumps(body)))
    return test


test_without_web_access_no_anthropic_part_by_url_or_unknown_leaves = _test_web_off("anthropic")
test_without_web_access_no_chat_part_by_url_or_unknown_leaves = _test_web_off("chat")
test_without_web_access_no_responses_part_by_url_or_unknown_leaves = _test_web_off("responses")
test_without_web_access_no_gemini_part_by_url_or_unknown_leaves = _test_web_off("gemini")
test_with_web_access_every_anthropic_part_by_url_passes_and_nothing_unknown = _test_web_on("anthropic")
test_with_web_access_every_chat_part_by_url_passes_and_nothing_unknown = _test_web_on("chat")
test_with_web_access_every_responses_part_by_url_passes_and_nothing_unknown = _test_web_on("responses")
test_with_web_access_every_gemini_part_by_url_passes_and_nothing_unknown = _test_web_on("gemini")

_JSON = st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=10) | urls,
                     lambda inner: st.lists(inner, max_size=4) | st.dictionaries(
                         st.sampled_from(["type", "content", "parts", "source", "url", "image_url", "fileData",
                                          "messages", "input", "contents", "output", "role", "text", "x"]),
                         inner, max_size=5), max_leaves=40)


URL_KEYS = frozenset({"url", "image_url", "file_url", "file_data", "fileData", "fileUri", "file_uri", "file_id"})


@SETTINGS
@given(st.sampled_from(list(BODIES)), st.dictionaries(
    st.sampled_from(["model", "messages", "input", "contents", "system", "systemInstruction", "tools", "x"]),
    _JSON, max_size=5), st.booleans())
def test_any_json_object_is_read_or_refused_and_never_leaves_an_address_without_web_access(api, body, web_access):
    try:
        sent = json.loads(_sent(api, body, web_access))
    except BodyRefused:
        return
    assert isinstance(sent, dict)
    if not web_access:
        assert not any(FETCH in json.dumps(value) for value in _addresses(
            [sent.get(key) for key in ("messages", "input", "contents", "system", "systemInstruction")]))


def _addresses(value) -> list:
    """Every value held under a key that names an address, anywhere in `value`."""
    if isinstance(value, list):
        return [found for item in value for found in _addresses(item)]
    if not isinstance(value, dict):
        return []
    return [v for k, v in value.items() if k in URL_KEYS] + _addresses(list(value.values()))


def test_a_responses_tool_whose_type_is_not_text_is_dropped_as_unknown():
    """Found by the property above: a `type` that is a list or an object (unhashable) is no tool the
    relay declares; it is dropped, never a crash of the relay."""
    assert json.loads(_sent("responses", {"tools": [{"type": []}, {"type": {}}]}, False)).get("tools") in (None, [])


def test_a_responses_input_item_whose_type_is_not_text_passes_to_the_grammar_without_a_crash():
    sent = json.loads(_sent("responses", {"input": [{"type": []}]}, False))
    assert isinstance(sent, dict)
