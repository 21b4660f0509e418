"""The key guard's gate (bot/relay/key_guard.py) looks for all of a view's pieces in one pass of an
automaton; it fires on exactly what the one `find` per piece it replaced fired on, kept here as the
oracle, and a stream is blanked and held the same, byte for byte, whatever its piece boundaries."""
from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from bot.relay import key_guard
from bot.relay.key_guard import KeyGuard, StreamMask
from tests.relay.conftest import REAL_KEY
from tests.relay.key_encodings import ENCODINGS

# a key as the tests' provider has it, a longer one of another provider's shape, and a secret too
# plain to have runs searched for (only its exact forms are: the benchmark's key is such a one)
SECRETS = (REAL_KEY, "sk-ant-api03-Q7mZp2Lx9VbN4kRt8WcY3hJd6FsG1aE5uTo0iPlK-AA", "sk-bench-real")


def _old_gate(guard: KeyGuard, data: bytes) -> bool:
    """The gate as it was: a `find` for each exact form, full-width mark and piece of each view."""
    if any(form in data for form in guard._exact) or any(mark in data for mark in key_guard._FULL_WIDTH):
        return True
    if key_guard._escapes(data):
        return True
    for name, pieces in guard._needles.pieces.items():
        if name not in key_guard._KINDS:
            continue
        view = key_guard._view(data, key_guard._KINDS[name])
        if any(piece in view for piece in pieces):
            return True
    return False


class _OldGuard(KeyGuard):
    def _gate(self, data: bytes) -> bool:
        return _old_gate(self, data)


GUARDS = [(KeyGuard([secret]), _OldGuard([secret])) for secret in SECRETS]


def _near_misses(secret: str) -> list[str]:
    """What lies close to a gate piece: each encoding of the key, its pieces, its runs cut short."""
    forms = [encode(secret) for encode in ENCODINGS.values()]
    guard = KeyGuard([secret])
    pieces = [piece.decode("latin-1") for pieces in guard._needles.pieces.values() for piece in pieces]
    return forms + pieces + [form[:cut] for form in forms for cut in (5, 11, 12, 15, 16)]


def _text(secret: str) -> st.SearchStrategy[bytes]:
    part = st.one_of(st.sampled_from(_near_misses(secret)), st.text(max_size=30),
                     st.sampled_from(["\n\n", "\\u00", "%2", "&#", "\uff21", "\u200b", "0x", "data: "]))
    return st.lists(part, max_size=12).map(lambda parts: "".join(parts).encode("utf-8", "surrogatepass"))


@st.composite
def _case(draw: st.DrawFn) -> tuple[int, bytes]:
    which = draw(st.integers(0, len(SECRETS) - 1))
    return which, draw(_text(SECRETS[which]))


@settings(max_examples=500, deadline=None)
@given(case=_case())
def test_the_gate_fires_on_exactly_what_a_find_per_piece_fired_on(case):
    which, data = case
    new, old = GUARDS[which]
    assert new._gate(data) == _old_gate(old, data)


@settings(max_examples=300, deadline=None)
@given(case=_case(), cuts=st.lists(st.integers(0, 600), max_size=8))
def test_a_stream_leaves_as_it_left_with_the_old_gate_at_any_piece_boundaries(case, cuts):
    which, data = case
    new, old = GUARDS[which]
    points = sorted({min(cut, len(data)) for cut in cuts})
    pieces = [data[a:b] for a, b in zip([0, *points], [*points, len(data)], strict=True)]
    assert _fed(new.stream(), pieces) == _fed(old.stream(), pieces)


def _fed(mask: StreamMask, pieces: list[bytes]) -> tuple[list[bytes], bytes, int]:
    return [mask.feed(piece) for piece in pieces], mask.close(), mask.found


def test_the_gate_finds_a_piece_of_a_view_in_a_text_of_many_pieces():
    new, old = GUARDS[1]
    piece = new._needles.pieces["base64"][-1]
    data = b'data: {"text": "' + b"lorem ipsum " * 20000 + piece + b'"}\n\n'
    assert new._gate(data) and _old_gate(old, data)


def test_the_gate_stays_shut_on_a_long_answer_without_the_key():
    new, old = GUARDS[1]
    data = b'event: content_block_delta\ndata: {"delta": {"text": "abcd"}}\n\n' * 5000
    assert not new._gate(data) and not _old_gate(old, data)


def test_a_gate_of_more_pieces_than_a_dfa_holds_finds_each_of_them():
    """A ChatGPT login's tokens cut into thousands of pieces: the automaton is then an NFA."""
    login = "".join(f"{n:04d}Qz" for n in range(400))  # 2,400 characters, key-like
    guard = KeyGuard([login])
    pieces = guard._needles.pieces["skeleton"]
    assert len(pieces) > key_guard.DFA_MOST
    for piece in pieces[::97]:
        data = b'data: {"text": "' + piece + b'"}\n\n'
        assert guard._gate(data) and _old_gate(guard, data)
