"""The facts of `citemark.display` that the kernel (`clean_c`) and its twin (`clean_py`) share.

Both read these values at import, so a rule changes here and nowhere else.
"""

from __future__ import annotations

from .grammar import CITATION_DELIMITER, CITATION_START, CITATION_STOP

START = CITATION_START
DELIM = CITATION_DELIMITER
STOP = CITATION_STOP
# Every private-use character of the markers: START, STOP, DELIM, U+E203/U+E204 (they bracket
# the prose a citation supports), U+E205, U+E206 (a grouped-sources anchor).
FIRST_MARKER = 0xE200
LAST_MARKER = 0xE206
# The private-use characters that clean removes wherever they are outside Markdown code: the
# Basic Multilingual Plane's Private Use Area, which holds the markers' characters and the
# icon glyphs some exports leave in answers (U+E316, U+F8FF).  They show as boxes or as
# nothing, and no prose needs them.
FIRST_PRIVATE = 0xE000
LAST_PRIVATE = 0xF8FF
PRIVATE_RANGE = f"{chr(FIRST_PRIVATE)}-{chr(LAST_PRIVATE)}"  # the body of a regex class

# A marker longer than this (START to STOP, code points) is not one: its STOP is too far to be
# trusted, and the stream never holds more than this for one marker.
MAX_MARKER = 4096

# What `marker_state(text)` of the clean kernels says: whether a text holds a marker
# character, and whether one may lie in Markdown code (then the code scan runs first).
NO_MARKERS = 0
MARKERS_OUTSIDE_CODE = 1
MARKERS_MAYBE_IN_CODE = 3

# Token kinds, as the scanners report them.
STRAY = 0  # a lone marker character
MARKER = 1  # START family [DELIM body] STOP
ENTITY = 2  # a MARKER of the family below: its body is shown, not removed
BROKEN = 3  # START family DELIM ids, never closed (or abandoned by a new START)
BARE = 4  # DELIM ids, outside any marker
ENTITY_FAMILY = "entity"
# Families a sentence reads through, like entities: "See <link_title: Docs, turn0search1> for
# more" shows its title (the body's first part) instead of losing the word.
TITLED_FAMILIES = ("url", "link_title")

# Spacing around a removed marker.  BLANKS are the horizontal white space that a removal may
# double up (U+3000 is the ideographic space of CJK text); CLOSING the punctuation that never
# follows a space ("sentence \ue200..\ue201." and "sentence \ue200..\ue201 ." are "sentence.").
# Straight quotes are not in it: one may open as well as close (see QUOTES).
BLANKS = " \t\u00a0\u200b\u202f\u3000"
# The no-break spaces, which French typesetting puts before ; : ! ? and inside « »: between
# the markers and closing punctuation they stay ("élevé <marker>\u202f;" is "élevé\u202f;").
NO_BREAK = "\u00a0\u202f"
CLOSING = (
    ".,;:!?)]}%\u2026\u201d\u2019\u00bb\u3001\u3002\uff0c\uff0e\uff1a\uff1b\uff01\uff1f\uff09"
    "\u3011\uff3d"
    # Arabic's comma, semicolon, question mark and full stop; Devanagari's danda and double
    # danda; Armenian's full stop; Ethiopic's full stop, comma and semicolon; Myanmar's
    # little section and section
    "\u060c\u061b\u061f\u06d4\u0964\u0965\u0589\u1362\u1363\u1364\u104a\u104b"
)
# Straight quotes and Markdown's emphasis marks open as well as close: right after a removal,
# a run of one of them counts as closing punctuation when a blank, a line end, closing
# punctuation, a dash, another of them, a character of a script written without blanks
# (UNSPACED) or the end of the text follows it ('"yes <marker>"' is '"yes"', "**fact
# <marker>** here" and "**Kyoto <marker>**—the capital" keep their bold); after a blank, or
# before a word, a digit or another symbol, it opens ('said <marker> "yes"', "<marker>
# **(1868)**" and "a <marker> * b" keep their blank).  Quotes that open in one language and
# close in another („Ja“ and “yes”, ‹oui› and ›ja‹) are read as the straight ones, and so is
# the dollar that delimits inline math ("$E=mc^2 <marker>$" is "$E=mc^2$"; "<marker>$5" opens).
QUOTES = "\"'*_\u201c\u2018\u2039\u203a$"
DASHES = "\u2013\u2014"
# Markdown's emphasis and strikethrough marks: a pair of runs around nothing but markers (and
# blanks) goes with them, as an emptied bracket does ("**<marker>** for" is " for", not a
# literal "****").  Not `_`, which also joins words ("snake_<marker>_case").
EMPHASIS = "*~"
# Brackets and separators that removals may leave with nothing in them: "(<marker>)" and
# "(<marker>, <marker>)" leave no "()" or "(,)".  OPENERS[k] is closed by CLOSERS[k]; every
# closer is CLOSING too.  A separator goes when nothing stands on one side of it (an opener,
# a line start or another separator before it; a closer, closing punctuation or a line end
# after it), and a bracket when only blanks are left inside.
OPENERS = "([\uff08\u3010\uff3b"
CLOSERS = ")]\uff09\u3011\uff3d"
SEPARATORS = ",;\uff0c\uff1b\u3001"
LINE_BREAKS = "\n\r"
# Scripts written without blanks between words: Han (with its radicals and compatibility
# ideographs), kana, their punctuation and the full-width forms; not Hangul, whose words are
# spaced.  The blanks around a removal between two of their characters, or after their
# punctuation, were put there for the marker and go with it ("门槛。<marker> 其后" is
# "门槛。其后"; "中文<marker> English" keeps its blank).  Inclusive ranges of code points,
# in order.
UNSPACED = (
    (0x2E80, 0x2FDF),
    (0x3001, 0x30FF),
    (0x31F0, 0x31FF),
    (0x3400, 0x4DBF),
    (0x4E00, 0x9FFF),
    (0xF900, 0xFAFF),
    (0xFE30, 0xFE4F),
    (0xFF01, 0xFF9F),
    (0xFFE0, 0xFFEE),
    (0x20000, 0x3FFFF),
)
# Their punctuation (and brackets), which no blank follows whatever comes next.
UNSPACED_PUNCTUATION = (
    (0x3001, 0x303F),
    (0xFE30, 0xFE4F),
    (0xFF01, 0xFF0F),
    (0xFF1A, 0xFF20),
    (0xFF3B, 0xFF40),
    (0xFF5B, 0xFF65),
)
# `[text](<marker>)`: how far back the `[` of the link text may be (same line only).
LINK_TEXT_MAX = 512

# The stream's front (display.CleanStream._front and the kernels' StreamFront that takes its
# common deltas): the states of the line being written.
FRONT_OFF = 0  # the rest of the line waits for its end (it may be code)
LINE_START = 1  # its first characters (blanks, container marks) say nothing yet
FRONT_ON = 2  # it goes out as far as it is decided
# What the front never releases on its own, besides every private-use character (a marker's):
# a line break, a backtick (inline code), a tilde (a fence, at a line's start) and a `[` (a
# link text that a marker as its destination unwraps).
FRONT_STOPS = "\n\r`~["
# What a removal may take away before it (the spacing rule: blanks, a bracket, separator or
# emphasis it empties) or read after it (a quote, which closes or opens by what follows it),
# and line breaks: the front never ends a piece on one of these, nor on a private-use
# character.
NOT_PLAIN = BLANKS + OPENERS + CLOSERS + SEPARATORS + LINE_BREAKS + QUOTES + EMPHASIS
# What may start a line before its kind is known: blanks and container marks (an indented
# code line's code comes after them).
LINE_ZONE = " \t>-+*.)0123456789"
# A held tail up to this long (a marker or two) is looked at on every delta; a longer one again
# only once it has doubled, so the looks stay linear.
SHORT_HOLD = 128
# Complete lines that the compiled front ended itself reach the Markdown scanner when it is
# next needed, or once this many characters wait (so what the front keeps for it is bounded).
SCAN_BEHIND = 1 << 16
