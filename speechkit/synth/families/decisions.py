"""Families of the ``decision`` act: a question of a project settled on one of two choices.

Slots: ``{q}`` the question, ``{c}`` the choice finally taken, ``{c0}`` the other choice (taken
first and then reversed where the family ``corrects`` the choice), ``{j}`` a jargon term,
``{x}`` / ``{y}`` / ``{h}`` the addressee, a third attendee and the host.
"""

from __future__ import annotations

from speechkit.synth.acts import LATER, Family

T, H = "tuned", "held-out"

FAMILIES = (
    Family(
        "decision.go-with",
        T,
        (
            ("host", "We need to decide on {q}. It's either {c} or {c0}."),
            ("who", "I'd go with {c}. The other option means more work."),
            ("host", "Okay, let's go with {c} then."),
        ),
    ),
    Family(
        "decision.or", T, (("host", "For {q}, {c} or {c0}?"), ("who", "{c}, I think."), ("host", "Let's go with {c}."))
    ),
    Family("decision.decided", T, (("host", "On {q}, I've decided, we go with {c}."), ("who", "Fine by me."))),
    Family(
        "decision.scrap-that",
        T,
        (
            ("host", "So for {q}, let's go with {c0}."),
            ("who", "Wait, {c0} breaks the {j} timeline."),
            ("host", "Fair point. Scrap that, let's go with {c}."),
        ),
        corrects="choice",
    ),
    Family(
        "decision.objection",
        H,
        (
            ("who", "I was thinking {c0} for {q}."),
            ("alt", "I'm not sure, that means we redo the {j} work."),
            ("who", "Hmm. True. Then {c}?"),
            ("host", "{c} it is."),
        ),
    ),
    Family(
        "decision.hands",
        H,
        (
            ("host", "Quick show of hands on {q}. {c}?"),
            ("who", "Me."),
            ("alt", "Yeah, me too."),
            ("host", "Okay, that's a majority for {c}."),
        ),
    ),
    Family(
        "decision.no-objections",
        H,
        (("host", "Unless anyone objects, {q} will be {c}."), ("host", "Nobody? Good, that's settled.")),
    ),
    Family(
        "decision.stay-with",
        H,
        (
            ("host", "We said {c0} for {q}, right?"),
            ("who", "We did, but after the {j} issue I'd rather not."),
            ("host", "Agreed. No, let's stay with {c}."),
        ),
        corrects="choice",
    ),
    Family(
        "decision.parked",
        H,
        (
            ("host", "Let's park {q} for now, {c} or {c0}, I want to think about it."),
            LATER,
            ("host", "Back to {q}. I thought about it, {c}."),
            ("who", "Makes sense to me."),
        ),
    ),
    Family(
        "decision.your-call",
        H,
        (("who", "It's your call on {q}, {h}."), ("host", "Then {c}. The alternative is too risky right now.")),
    ),
    Family(
        "decision.slip",
        H,
        (("host", "Right, {q}. We'll do {c0}, sorry, I mean {c}."), ("who", "{c}, got it.")),
        corrects="choice",
    ),
    Family(
        "decision.cut-in",
        H,
        (
            ("who", "On {q}, if we do {c0} we'd need to rewrite the whole"),
            ("~host", "We won't. {c}, final answer."),
            ("who", "Okay, fine."),
        ),
    ),
)
