"""Answer extraction: a model's raw output → an answer, by a named deterministic rule.

A rule is a function ``(item, text) -> answer | None`` registered under kind
``extractor`` with a ``version``; `extract` records ``name@version`` with every
answer, so scores say how each answer was decided and stale answers can be
re-extracted. ``None`` means *invalid*: scored wrong and counted separately.

The benchmark's `BenchmarkSpec.extractors` names the rule per task; otherwise
the item's answer type decides (``choice`` → ``letter``, ``yesno`` → ``yesno``,
``ordering`` → ``ordering`` (in `medtemporal.scoring.ordering`), ``open`` → ``text``). The full ``letter`` rule is in `letter` and in
``docs/extraction.md``.

>>> from medtemporal.schema import Item
>>> item = Item.create(benchmark="x", task="TEL", subtype="s", images=[], question="?",
...     options={"A": "T1 → T2", "B": "T2 → T3", "C": "T3 → T4"}, answer_type="choice", answer="C")
>>> extract(item, "The answer is C. T3 → T4", rule="letter")
Extraction(answer='C', rule='letter@3')
>>> extract(item, "正确答案是C。", rule="letter").answer
'C'
>>> extract(item, "A or B", rule="letter").answer is None
True
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from functools import lru_cache
from typing import Callable, Iterable, Mapping

from medtemporal.contract import BenchmarkSpec, spec
from medtemporal.errors import InvalidInputError
from medtemporal.registry import lookup, register
from medtemporal.schema import Item
from medtemporal.scoring import languages as lang
from medtemporal.scoring.metrics import Answer

Rule = Callable[[Item, str], Answer]

DEFAULT_RULES: dict[str, str] = {"choice": "letter", "yesno": "yesno", "ordering": "ordering", "open": "text"}
"""Answer type → rule used when the benchmark's spec names none for the task."""


@dataclass(frozen=True)
class Extraction:
    """The answer found in one output (None: invalid) and the rule id that found it."""

    answer: Answer
    rule: str


def rule_name(item: Item) -> str:
    """The registered rule that extracts answers for ``item``.

    Raises:
        InvalidInputError: neither the benchmark's spec nor the answer type names a rule.
    """
    name = BenchmarkSpec.for_task(spec(item.benchmark).extractors, item.task)
    name = name or DEFAULT_RULES.get(item.answer_type)
    if name is None:
        raise InvalidInputError(
            f"No answer-extraction rule for {item.answer_type!r} items of benchmark {item.benchmark!r}; "
            "name one in its BenchmarkSpec.extractors."
        )
    return name


def rule_id(name: str) -> str:
    """``name@version`` of a registered rule (just ``name`` if it declares no version)."""
    version = lookup("extractor", name).info.get("version")
    return f"{name}@{version}" if version else name


def extract(item: Item, text: str | None, rule: str | None = None) -> Extraction:
    """Extract ``item``'s answer from model output ``text`` with its rule (or ``rule``).

    Args:
        item: The question answered.
        text: The raw model output; None or blank gives an invalid (None) answer.
        rule: A registered rule name overriding the benchmark's choice.

    Returns:
        The answer (None when invalid) and the id of the rule that decided it.
    """
    name = rule or rule_name(item)
    entry = lookup("extractor", name)
    rid = rule_id(name)
    if text is None or not text.strip():
        return Extraction(None, rid)
    return Extraction(entry.obj(item, text), rid)


# --- shared text handling -----------------------------------------------------------------

_THINK = re.compile(r"<think>.*?(?:</think>|\Z)", re.I | re.S)
_THINK_TAIL = re.compile(r"\A.*</think>", re.I | re.S)
_TURN_END = re.compile(r"<\|(?:im_end|eot_id|endoftext|end_of_text|end)\|>|<end_of_turn>|</s>", re.I)
_CHAT_TOKEN = re.compile(r"<\|[A-Za-z_]{1,30}\|>|<(?:start_of_turn|bos|eos|s)>|\[/?INST\]", re.I)
_ROLE = re.compile(r"\A\s*(?:assistant|model|gpt)\s*(?::[ \t]*|\n)", re.I)
_EMPHASIS = re.compile(r"\*{1,3}|_{2,3}|`+")
_LINE_MARKUP = re.compile(r"^[ \t]*(?:#{1,6}|>)[ \t]*", re.M)
_QUOTES = "\"'“”‘’«»"


def normalise(text: str) -> str:
    """The reply as a reader sees it: NFKC; chat-template leftovers, reasoning blocks and markdown
    emphasis/heading marks removed; stripped.

    The reply ends at the first end-of-turn token (``<|im_end|>``, ``<|eot_id|>``, ``<end_of_turn>``,
    ``</s>``, ``<|endoftext|>``) that has text before it: what follows is a turn the model invented.
    Other special tokens (``<|im_start|>``, ``[INST]``) and a leading role label (``assistant``,
    ``ASSISTANT:``, ``model``) are dropped. ``<think>…</think>`` blocks are removed (an unclosed
    ``<think>`` removes the rest), and so is everything up to a ``</think>`` whose opening tag the
    chat template wrote into the prompt.
    """
    text = _ROLE.sub("", _after_reasoning(unicodedata.normalize("NFKC", text)))
    text = _EMPHASIS.sub("", text)
    return _LINE_MARKUP.sub("", text).strip()


def _after_reasoning(text: str) -> str:
    """``text`` up to the first end-of-turn token with text before it, without chat tokens (box tokens included)
    and without reasoning (closed ``<think>`` blocks, an unclosed one to the end, everything up to a ``</think>``
    whose opening tag the prompt held)."""
    for m in _TURN_END.finditer(text):
        if _CHAT_TOKEN.sub("", text[: m.start()]).strip():
            text = text[: m.start()]
            break
    text = _CHAT_TOKEN.sub("", _TURN_END.sub("", text))
    return _THINK_TAIL.sub(" ", _THINK.sub(" ", text))


_ANSWER_SLOT = re.compile(r"<answer>(.*?)(?:</answer>|\Z)", re.I | re.S)
_WHOLE_BOX = re.compile(r"\A\s*\\boxed\{(.*)\}\s*\Z", re.S)


def final_text(text: str) -> str:
    """The final answer of a free-text output, as a reasoning model's paper reads it: the reply after its
    reasoning (`_after_reasoning`: leaked chat turns, box tokens and ``<think>`` blocks removed), then the content
    of its ``<answer>`` slot, or of a ``\\boxed{…}`` that holds all of it, stripped; an output with none of these
    is returned unchanged.

    >>> final_text("<think>Maybe an effusion.</think> <answer>Stable cardiomegaly.</answer><|im_end|>")
    'Stable cardiomegaly.'
    """
    after = _after_reasoning(text)
    if after != text:  # what separated the answer from the reasoning is not part of it
        text = after.strip()
    slot = _ANSWER_SLOT.search(text)
    if slot is not None:
        text = slot.group(1).strip()
    box = _WHOLE_BOX.match(text)
    return box.group(1).strip() if box is not None else text


def _plain(text: str) -> str:
    """Text compared for exact option matching: casefolded, one space, ``->`` as ``→``."""
    text = unicodedata.normalize("NFKC", text).replace("->", "→")
    return " ".join(text.split()).strip(_QUOTES + " ").casefold()


# Explicit answer slots: their content must name an option, else the output is invalid.
_TAGS = re.compile(r"<answer>([^<]{0,2000})</answer>|\\boxed\{\s*(?:\\text(?:bf)?\{)?([^{}]*)\}?\s*\}", re.I | re.S)
_FINAL = re.compile(
    r"(?:\bfinal[\s_]+(?:answer|choice|option)(?!s)|[\"']final[_ ]answer[\"']|" + lang.FINALS + r")"
    r"\s*(?:is|would\s+be|:|=|-|–|—)?\s*(?:(?:" + lang.OPTION_WORDS + r")(?!s)\s*)?",
    re.I,
)
_MARKER = re.compile(
    r"(?:\b(?:correct|right|best|true|most\s+(?:likely|appropriate|accurate))\s+(?:answer|option|choice|statement)(?!s)"
    r"|\banswer\b(?:\s+to\s+(?:the|this|your)\s+question)?"
    r"|\bI(?:\s+would|\s+will|'ll|’ll|'d|’d)?\s+(?:choose|select|pick|go\s+with|opt\s+for|lean\s+towards?)"
    r"|\bmy\s+(?:choice|pick|selection)\b"
    r"|[\"'](?:choice|option|selected[_ ]?(?:option|choice|answer)|prediction|answer[_ ]letter|letter)[\"'](?=\s*:)"
    r"|" + lang.MARKERS + r")"
    r"\s*(?:is|would\s+be|should\s+be|will\s+be|=|:|-|–|—)?\s*(?:(?:" + lang.OPTION_WORDS + r")(?!s)\s*)?",
    re.I,
)
_POSTFIX = re.compile(
    r"(?<![^\W" + lang.CJK + r"])(?<!['’\-→])(?:option\s+|choice\s+)?\(?([A-Z])\)?(?:\s+(?:is|seems|appears)\s+(?:to\s+be\s+)?(?:the\s+)?"
    r"(?:most\s+)?(?:correct|right|best|likely|plausible|appropriate|accurate)\b|" + lang.POSTFIX + r")",
    re.I,
)
_LEAD_IN = re.compile(r"[\s" + _QUOTES + r":=\-–—]*((?:" + lang.OPTION_WORDS + r")(?!s)\s*)?", re.I)
_TOKEN = re.compile(r"(?:([(\[])\s*)?([A-Za-z])(?:\s*([)\]]))?")
_JOIN = re.compile(
    r"\s*(?:,?\s*(?:\bor\b|\band\b|\bnor\b)(?:\s+(?:possibly|perhaps|maybe|potentially|also))?|,|/|&|\bvs\.?|\bversus\b"
    r"|" + lang.JOINS + r")\s*(?:(?:option|choice|选项)\s*)?",
    re.I,
)
_OR_LATER = re.compile(
    r"[.):]?[^\n.!?]{0,80}?\bor\s+(?:possibly\s+|perhaps\s+|maybe\s+)?(?:(?:option|choice)\s+)?(?=\(?[A-Z][.)])", re.I
)
_LINE_LETTER = re.compile(
    r"^[ \t]*(?:[-+•][ \t]+)?(?:(?:option|choice)[ \t]+)?[(\[]?([A-Za-z])(?:[)\]][.:]?|[.:])(?=\s|$)", re.M | re.I
)
_LOOSE = re.compile(r"(?<![^\W" + lang.CJK + r"])(?<!['’\-→←])([A-Z])(?![^\W" + lang.CJK + r"]|['’\-→←])")
_WORD_AFTER = re.compile(r"[ \t]+(?!(?:or|and|nor|vs|versus)\b)[a-z]")
_CLOSES = re.compile(r"[ \t]*(?:[.,:;!?\n" + _QUOTES + lang.STOPS + r"]|选项|$)")
_NOT_BEFORE = re.compile(r"(?:\bnot\s+|(?:" + lang.NOT_BEFORE + r")\s*)(?:option\s+|choice\s+|选项)?\(?$", re.I)
_WORD_LETTERS = frozenset("AI")  # also English words: the article "A", the pronoun "I"
_GLUED = re.compile(r"[^\W" + lang.CJK + r"]|['’\-→←]")
"""What makes a letter part of a word (``T3``, ``B-lines``, ``E→R``) when it touches it; CJK characters do
not ("答案是C", "C选项")."""


def _token(text: str, pos: int, article: bool) -> tuple[str, int] | None:
    """An option-letter token at ``pos``: (upper-case letter, end) or None.

    Lower-case letters count only when bracketed or followed by punctuation or
    the end of a line; with ``article``, "A"/"I" followed by a lower-case word
    are read as English words.
    """
    m = _TOKEN.match(text, pos)
    if not m:
        return None
    opened, letter, closed = m.groups()
    rest = text[m.end() :]
    if not closed and _GLUED.match(rest):
        return None
    if letter.islower() and not (opened or closed or _CLOSES.match(rest)):
        return None
    if article and letter in _WORD_LETTERS and not (opened or closed) and _WORD_AFTER.match(rest):
        return None
    return letter.upper(), m.end()


def _head(segment: str, options: Mapping[str, str], article: bool) -> list[str]:
    """Letters a segment opens with (``C``, ``(c)``, ``Option B:``, ``A or B``, an echoed list
    ``A. Yes B. No``), else the option whose exact text it opens with; [] when it names neither."""
    lead = _LEAD_IN.match(segment)
    pos = lead.end()
    found = _token(segment, pos, article and not lead.group(1))  # "Option A best…" is the letter
    if found is None:
        return _by_text(segment[pos:], options)
    letters = [found[0]]
    while found := _continued(segment, found[1], found[0], options):
        letters.append(found[0])
    return letters


_MARK = re.compile(r"(?:[(\[][ \t]*([A-Z])[ \t]*[)\]][.:]?|([A-Z])[.):])(?=\s|$)")
_GAP = re.compile(r"[ \t]*[.,;:]?[ \t]*")
_NEXT_LINE = re.compile(r"[ \t.,;:]*\n\s*(?:[-+•][ \t]+)?")
_BARE_AFTER = re.compile(r"[ \t]*(?:$|\n|[(\[]?[A-Z][.):\]])")
"""What follows a marker that continues a list of bare letters: the end of the line or another marker."""
_WORD_AFTER_MARK = re.compile(r"\s+[A-Z0-9]")


_TEXT_LEAD = re.compile(r"[ \t]*(?:([.:)\-–—])[ \t]*)?")
"""What may stand between a letter and its option text (``A. Yes``, ``B) T2 -> T3``, ``C - T3 → T4``)."""


@lru_cache(maxsize=4096)
def _text_words(text: str) -> tuple[tuple[str, ...], ...]:
    """An option's text as words to match, each split at its arrows and lower-cased (a closing full stop or
    other mark dropped): ``"T1 → T2."`` → ``(("t1",), ("", ""), ("t2",))``."""
    return tuple(tuple(piece.lower() for piece in word.split("→"))
                 for word in text.strip().rstrip(".!;:,").split())


def _text_end(segment: str, pos: int, text: str) -> int | None:
    """Where ``text`` ends when it follows ``pos`` as an option's text follows its letter (after `_TEXT_LEAD`),
    else None: its words in order, compared in lower case, any white space between them, ``->`` for ``→``,
    and no word character right after it. None for an empty text.

    Plain string comparisons: nothing is compiled per option text, so reading an answer costs the same for
    options never seen before (every GTS item has its own texts).
    """
    words = _text_words(text)
    if not words:
        return None
    lead = _TEXT_LEAD.match(segment, pos)
    end = _words_end(segment, lead.end(), words)
    if end is None and lead.group(1):  # the mark may be the text's own first character (an option "-")
        end = _words_end(segment, lead.start(1), words)
    return end


def _words_end(segment: str, at: int, words: tuple[tuple[str, ...], ...]) -> int | None:
    """Where ``words`` (`_text_words`) end when they start at ``at``, else None."""
    for k, pieces in enumerate(words):
        if k:
            start = at
            while at < len(segment) and segment[at].isspace():
                at += 1
            if at == start:
                return None
        for j, piece in enumerate(pieces):
            if j:
                if segment.startswith("→", at):
                    at += 1
                elif segment.startswith("->", at):
                    at += 2
                else:
                    return None
            if segment[at : at + len(piece)].lower() != piece:
                return None
            at += len(piece)
    following = segment[at : at + 1]
    return None if following and (following.isalnum() or following == "_") else at


def _own_text(segment: str, pos: int, letter: str, options: Mapping[str, str]) -> int | None:
    """Where ``letter``'s option text ends if it follows at ``pos``, else None."""
    return _text_end(segment, pos, options.get(letter, ""))


def _marker(segment: str, pos: int, options: Mapping[str, str]) -> tuple[str, int, bool] | None:
    """An option marker (``B.``, ``B)``, ``B:``, ``(B)``) at ``pos``: (letter, end, whether its own
    option text follows), or None."""
    m = _MARK.match(segment, pos)
    if not m or (letter := m.group(1) or m.group(2)) not in options:
        return None
    return letter, m.end(), _own_text(segment, m.end(), letter, options) is not None


def _continued(segment: str, pos: int, letter: str, options: Mapping[str, str]) -> tuple[str, int] | None:
    """The next letter a segment names after ``letter`` (read up to ``pos``), or None.

    Right after the letter, ``or``/``and``/``,``/``/`` and another letter ("A or B"). After the
    letter's own option text, the next option marker on the line (``A. Yes B. No``, ``A) T1 → T2
    or C) T3 → T4``) when that option's text follows it too, or the marker of the next option in
    order opening the next line with its text (a list echoed line by line). A marker followed by
    another marker or the end of the line continues a list of bare letters (``A. B. C.``).
    Explanations naming other letters ("C. Options A and B are too early") continue nothing.
    """
    if (join := _JOIN.match(segment, pos)) and (found := _token(segment, join.end(), True)):
        return found
    own = _own_text(segment, pos, letter, options)
    at = pos if own is None else own
    if own is not None and (join := _JOIN.match(segment, at)) and (mark := _marker(segment, join.end(), options)):
        return mark[0], mark[1]
    gap = _GAP.match(segment, at).end()
    if mark := _marker(segment, gap, options):
        bare = _BARE_AFTER.match(segment[mark[1] : mark[1] + 4])
        if (own is not None and mark[2]) or bare:
            return mark[0], mark[1]
    if (later := _OR_LATER.match(segment, pos)) and (mark := _marker(segment, later.end(), options)):
        if _WORD_AFTER_MARK.match(segment[mark[1] : mark[1] + 2]) or mark[2]:
            return mark[0], mark[1]
    letters = list(options)
    if own is not None and letter in letters[:-1] and (line := _NEXT_LINE.match(segment, at)):
        mark = _marker(segment, line.end(), options)
        if mark and mark[2] and mark[0] == letters[letters.index(letter) + 1]:
            return mark[0], mark[1]
    return None


def _by_text(segment: str, options: Mapping[str, str]) -> list[str]:
    """Options whose full text the segment's first line starts with, followed by punctuation or
    its end (longest text wins; identical texts give all of them)."""
    line = _plain(segment.split("\n", 1)[0])
    hits: dict[str, int] = {}
    for letter, text in options.items():
        plain = _plain(text).rstrip(".!;:,")
        if plain and line.startswith(plain) and _CLOSES.match(line, len(plain)):
            hits[letter] = len(plain)
    if not hits:
        return []
    longest = max(hits.values())
    return [k for k, n in hits.items() if n == longest]


def _loose(text: str, options: Mapping[str, str]) -> list[str]:
    """Upper-case option letters standing alone anywhere, except English words and "not X"."""
    letters = []
    for m in _LOOSE.finditer(text):
        letter = m.group(1)
        if letter not in options or _NOT_BEFORE.search(text, max(0, m.start() - 20), m.start()):
            continue
        if letter in _WORD_LETTERS and _WORD_AFTER.match(text, m.end()):
            continue
        letters.append(letter)
    return letters


def _decide(tiers: Iterable[list[str] | None], valid: Iterable[str]) -> str | None:
    """The first tier that names anything decides: one valid letter → it, else invalid."""
    valid = set(valid)
    for letters in tiers:
        if letters:
            distinct = set(letters)
            return distinct.pop() if len(distinct) == 1 and distinct <= valid else None
    return None


def _after(pattern: re.Pattern[str], text: str, span: int = 2000) -> Iterable[str]:
    """The text following each match of ``pattern`` (up to ``span`` characters: a letter or an
    option's text, never more, is read there)."""
    return (text[m.end() : m.end() + span] for m in pattern.finditer(text))


# --- rules -------------------------------------------------------------------------------


@register("extractor", "letter", version="3", answer_types=("choice",),
          description="one option letter by explicit answer statements; several, none or ambiguous → invalid")
def letter(item: Item, text: str) -> str | None:
    """The single option letter ``text`` commits to, or None (invalid).

    MI-CXR's rule (``seeds/000`` E.5, lines 1735–1744): one option extracted by
    rule-based parsing; "multiple answer choices, ambiguous selections, or
    unparseable formats" are wrong; no fuzzy matching. The output is
    normalised (`normalise`: NFKC, chat-template leftovers, ``<think>`` blocks,
    markdown). Then five tiers are tried in order; the first tier that names
    anything decides. If it names exactly one letter and that letter is one
    of ``item.options``, that is the answer; several different letters, or a
    letter that is not an option, make the output invalid.

    1. Answer slots: ``<answer>…</answer>`` and ``\\boxed{…}``. Their content
       must open with a letter or an option's exact text; otherwise invalid.
    2. "Final answer" statements: ``Final answer: C``, ``final answer is (c)``,
       a JSON ``"final_answer": "C"``.
    3. Answer statements: ``answer is``, ``Answer:``, ``answer`` on its own
       line (a markdown heading), ``correct/best option is``, ``I (would/'ll/'d)
       choose/select/pick/go with``, ``my choice is``, ``C is the correct
       answer``, and JSON keys (``"answer"``, ``"choice"``, ``"option"``, …).
    4. The output's opening: ``C``, ``(C)``, ``C.``, ``C)``, ``Option B: …``,
       ``E. None of the above``, or an option's exact text; together with
       option letters that open any line with ``.``, ``)`` or ``:`` (``- B) …``),
       so an option list echoed line by line is invalid.
    5. Anywhere: upper-case option letters standing alone (``… so (C).``).

    A letter is read from the text right after a statement (tiers 1–4), and
    what follows it may name more (`_continued`): ``or``/``and``/``,``/``/``
    and another letter ("A or B"); after the option's own text, another option
    marker with its text on the same line (an echo ``A. Yes B. No``, a hedge
    ``A) T1 → T2 or C) T3 → T4``) or the next option in order opening the
    next line with its text. Other letters in an explanation name nothing
    ("The answer is C. Options A and B are wrong" is C). Lower-case letters
    count only when bracketed or followed by punctuation or the end of a line
    (``answer: (c)``, ``c.``), never as words ("the answer is a pleural
    effusion"). At the opening and in tier 5, "A" (and "I") followed by a
    lower-case word is the English article or pronoun; after an answer
    statement an upper-case "A" is the letter ("The answer is A because…").
    Letters touching other word characters, hyphens, apostrophes or arrows are
    not letters (``T3``, ``B-lines``, ``E→R``); in tier 5 "not C" is skipped.

    Replies in other languages are read the same way (version 3): the
    statements, "option" words, joins and negations of
    `medtemporal.scoring.languages` ("最终答案：C", "答案是C", "选C", "我选择C",
    "C选项正确", "答えはC", "정답은 C", "La respuesta es C", "A或B" invalid,
    "不是A" skipped), and a letter touching Chinese, Japanese or Korean
    characters is still a letter ("C选项").

    Option text quoted back counts only when a segment (the opening, or the
    text after a statement or inside a slot) starts with an option's complete
    text followed by punctuation or the end of its line, compared after
    casefolding, collapsing spaces and reading ``->`` as ``→``. If two options
    have the same text, it is invalid. When an opening letter and quoted text
    disagree ("A. T2 → T3") the letter counts.
    """
    text = normalise(text)
    options = item.options
    slots = [_head(m.group(1) if m.group(1) is not None else m.group(2), options, False) or ["?"]
             for m in _TAGS.finditer(text)]
    finals = [x for seg in _after(_FINAL, text) for x in _head(seg, options, False)]
    statements = [x for seg in _after(_MARKER, text) for x in _head(seg, options, False)]
    statements += [m.group(1).upper() for m in _POSTFIX.finditer(text) if m.group(1).isupper()]
    tiers = (
        [x for slot in slots for x in slot],
        finals,
        statements,
        _head(text, options, True)
        + [x for m in _LINE_LETTER.finditer(text) if (x := m.group(1).upper()) in options],
    )
    decided = _decide(tiers, options)
    if decided is not None or any(tiers):
        return decided
    return _decide([_loose(text, options)], options)


_WORD = r"(" + lang.YES_NO_WORDS + r")\b"
_YES_NO = re.compile(
    r"[\s" + _QUOTES + r":=\-–—(\[]*" + _WORD
    + r"(?:\s*(?:/|\bor\b|\band\b|" + lang.JOINS + r")\s*" + _WORD
    + r"|\s*,\s*" + _WORD + r"(?=[ \t]*(?:[\])." + _QUOTES + lang.STOPS + r"]|$)))?",
    re.I | re.M,
)


_CLOSING_YES_NO = re.compile(
    r"(?:[,:;\n" + lang.STOPS + r"]|[.!?][ \t]|" + lang.CLOSERS + r")[ \t]*" + _WORD
    + r"[ \t]*[.!" + lang.STOPS + r"]?\s*\Z",
    re.I,
)
"""A reply's last word when it is yes/no closing a clause or a sentence ("…, yes.", "… stable. No.", "综上所述，是。")."""


def _yes_no(segment: str) -> list[str]:
    """["Yes"] / ["No"] for a segment opening with a yes/no word of any language in `medtemporal.scoring.languages`
    ("yes or no", an echoed "[Yes, No]", "是或否" give both), else []."""
    m = _YES_NO.match(segment)
    return [lang.YES_NO[w.lower()] for w in m.groups() if w] if m else []


@register("extractor", "yesno", version="3", answer_types=("yesno",),
          description="Yes/No by answer statements or the opening word; both or neither → invalid")
def yesno(item: Item, text: str) -> str | None:
    """``"Yes"`` or ``"No"`` as ``text`` states it, or None (invalid).

    Tiers as in `letter`, first that names anything decides: answer slots
    (``<answer>``, ``\\boxed``; must hold yes/no), "final answer" statements,
    answer statements, then the opening word ("No, the effusion…") together
    with a closing one ("Comparing both films, yes.", "The effusion is stable. No."). Yes/no words
    elsewhere are not read ("there is no change" names nothing), and an
    output naming both ("Yes or No", an echoed "[Yes, No]") is invalid.
    Version 3 reads the yes/no words of `medtemporal.scoring.languages` too
    (是/是的/否/不是/没有, はい/いいえ, sí, oui, nein, нет …), each only where it
    stands alone ("是的，…" is Yes; "是否…" and "没有明显变化" name nothing).
    """
    text = normalise(text)
    slots = [_yes_no(m.group(1) if m.group(1) is not None else m.group(2)) or ["?"] for m in _TAGS.finditer(text)]
    tiers = (
        [x for slot in slots for x in slot],
        [x for seg in _after(_FINAL, text) for x in _yes_no(seg)],
        [x for seg in _after(_MARKER, text) for x in _yes_no(seg)],
        _yes_no(text) + [lang.YES_NO[m.group(1).lower()] for m in _CLOSING_YES_NO.finditer(text)],
    )
    return _decide(tiers, ("Yes", "No"))


@register("extractor", "text", version="2", answer_types=("open",),
          description="the final answer of the output (after reasoning), stripped (free-text answers)")
def open_text(item: Item, text: str) -> str | None:
    """The output's final answer (`final_text`), surrounding space stripped; None if empty. Version 2 reads
    an ``<answer>`` slot, a whole ``\\boxed{}`` and leaked chat turns as `final_text` does (version 1 removed
    ``<think>`` blocks only, and kept the tags in the answer)."""
    return final_text(text).strip() or None


@register("extractor", "raw_text", version="2", answer_types=("open",),
          description="the output's final answer otherwise unchanged (metrics normalise it themselves)")
def raw_text(item: Item, text: str) -> str | None:
    """``text`` as the model returned it, but for what is not its answer (`final_text`: reasoning, an
    ``<answer>`` slot's tags, leaked chat turns); None when nothing is left (reasoning cut off by the token
    limit). Version 1 kept those."""
    answer = final_text(text)
    return answer if answer.strip() else None
