"""Families of the acts around the work items: ``greeting``, ``small_talk``, ``status``,
``number`` (a project number stated), ``question`` (asked and answered), ``aside`` (what looks
like an action item and is not: hypotheticals, past work, questions about someone else's task)
and ``closing``.

Slots: ``{x}`` / ``{y}`` / ``{h}`` the addressee, a third attendee and the host; ``{z}`` anyone
else in the organisation; ``{p}`` the project name, ``{t}`` its topic; ``{s}`` / ``{s2}`` status
phrases (``{S}`` / ``{S2}`` capitalised) about jargon ``{j}`` / ``{k}``; ``{nt}`` / ``{Nt}`` what
a number measures, ``{N}`` the number with its unit, ``{N0}`` a wrong number said first and
corrected; ``{task}`` a task nobody is given; ``{o}`` the owner of an open item of someone
else, ``{otask}`` its task and ``{od}`` its due day.
"""

from __future__ import annotations

from speechkit.synth.acts import Family

T, H = "tuned", "held-out"

FAMILIES = (
    # --- greeting ----------------------------------------------------------------------------------
    Family("greeting.lets-start", T, (("host", "Okay, let's get started."), ("who", "Morning."))),
    Family("greeting.keep-quick", T, (("host", "Morning everyone, let's keep this quick."), ("who", "Hi everyone."))),
    Family(
        "greeting.everyone", T, (("host", "Alright, I think we have everyone. Let's start."), ("who", "Sounds good."))
    ),
    Family(
        "greeting.making-time", T, (("host", "Hey {x}, thanks for making time."), ("who", "Hey. Yeah, good, busy."))
    ),
    Family(
        "greeting.waiting",
        H,
        (("host", "Are we waiting for anyone else?"), ("who", "I don't think so."), ("host", "Okay, then let's go.")),
    ),
    Family("greeting.hear-me", H, (("who", "Can you hear me okay?"), ("host", "Yep, loud and clear. Let's begin."))),
    Family(
        "greeting.late",
        H,
        (("who", "Sorry, sorry, I'm a couple of minutes late."), ("host", "No worries, we only just started.")),
    ),
    Family(
        "greeting.weekend",
        H,
        (("host", "Hi {x}, how was the weekend?"), ("who", "Good, too short."), ("host", "Always. Okay.")),
    ),
    Family("greeting.screen", H, (("host", "Let me share my screen, one second."), ("who", "Take your time."))),
    # --- small_talk --------------------------------------------------------------------------------
    Family(
        "small_talk.coffee", T, (("who", "Did anyone else try the new coffee machine?"), ("host", "It's much better."))
    ),
    Family("small_talk.rain", T, (("host", "Is it raining where you are too?"), ("who", "Pouring."))),
    Family(
        "small_talk.plans", T, (("alt", "Anyone doing anything fun this weekend?"), ("who", "Just resting, honestly."))
    ),
    Family("small_talk.lunch", T, (("who", "Are we still on for lunch later?"), ("host", "Yes, twelve thirty."))),
    Family(
        "small_talk.echo",
        H,
        (("host", "Someone has an echo, I think."), ("who", "Oh, that's me, sorry. Better?"), ("host", "Better.")),
    ),
    Family("small_talk.dog", H, (("who", "Sorry, that's my dog in the background."), ("alt", "Ha, say hi."))),
    Family(
        "small_talk.time-off",
        H,
        (("alt", "When are you off, by the way?"), ("who", "The week after next."), ("alt", "Lucky.")),
    ),
    Family("small_talk.traffic", H, (("who", "The traffic this morning was unreal."), ("host", "Tell me about it."))),
    Family(
        "small_talk.game",
        H,
        (
            ("alt", "Did you see the game last night?"),
            ("who", "Only the second half."),
            ("alt", "You missed the good part."),
        ),
    ),
    # --- status ------------------------------------------------------------------------------------
    Family("status.where-are-we", T, (("host", "{x}, where are we on {p}?"), ("who", "So {s}, and {s2}."))),
    Family(
        "status.quick-update",
        T,
        (("host", "{x}, can you give us a quick update on {t}?"), ("who", "Sure. {S}, and {s2}.")),
    ),
    Family("status.how-going", T, (("host", "So {x}, how is {p} going?"), ("who", "{S}. Also {s2}."))),
    Family("status.where-with", T, (("host", "{x}, where are we with {t}?"), ("who", "Well, {s}. And {s2}."))),
    Family("status.jump-in", H, (("who", "Can I jump in with {p}? {S}, and {s2}."), ("host", "Go ahead."))),
    Family("status.youre-up", H, (("host", "{x}, you're up."), ("who", "Okay, {p}. {S}. Oh, and {s2}."))),
    Family("status.anything-new", H, (("host", "Anything new on {t}?"), ("who", "A bit. {S}, but {s2}."))),
    Family(
        "status.cut-in",
        H,
        (
            ("who", "On {p}, [uh] {s}, and the other thing is that the"),
            ("~alt", "Sorry, is that the {j} one?"),
            ("who", "Yeah. And {s2}."),
        ),
    ),
    Family(
        "status.short-long", H, (("host", "Let's do {p}. {x}?"), ("who", "Short version, {s}. Long version, {s2}."))
    ),
    # --- number ------------------------------------------------------------------------------------
    Family("number.is", T, (("who", "{Nt} is {N} right now."),)),
    Family("number.stays", T, (("who", "And {nt} stays at {N}."),)),
    Family("number.came-in", T, (("who", "{Nt} came in at {N}."),)),
    Family("number.sorry", T, (("who", "{Nt} is {N0}, sorry, {N}."),), corrects="number"),
    Family("number.last-looked", H, (("who", "Last I looked, we were sitting at {N} for {nt}."),)),
    Family(
        "number.still-right", H, (("host", "{N} for {nt}, is that still right?"), ("who", "Yeah, that's still right."))
    ),
    Family(
        "number.set-straight",
        H,
        (
            ("who", "{Nt}, that's {N0}."),
            ("alt", "I think it's {N} now, it changed last week."),
            ("who", "Oh, right, {N}."),
        ),
        corrects="number",
    ),
    Family("number.restart", H, (("who", "So {nt}, it's, [uh] {N0}, no, wait, {N}."),), corrects="number"),
    Family("number.record", H, (("who", "For the record, {N}. That's {nt}."),)),
    Family("number.give-or-take", H, (("who", "We're, [um] we're at {N} on {nt}, give or take."),)),
    # --- question ----------------------------------------------------------------------------------
    Family("question.what-is", T, (("host", "What's {nt} at the moment?"), ("who", "It's {N}."))),
    Family("question.again", T, (("host", "Sorry, what was {nt} again?"), ("who", "{N}, as of this morning."))),
    Family("question.include", T, (("host", "Does that include {j}?"), ("who", "Yeah, {j} too."))),
    Family("question.what-about", T, (("host", "And what about {j}?"), ("who", "Not yet, {j} is next."))),
    Family("question.landed", H, (("alt", "Remind me what {nt} ended up as?"), ("who", "We landed on {N}."))),
    Family("question.cut-in", H, (("host", "And {nt}, is that still where it"), ("~who", "{N}. Same as last time."))),
    Family(
        "question.tag",
        H,
        (("alt", "{j} is covered too, isn't it?"), ("who", "Partly. {j} still needs a review from {z}.")),
    ),
    Family("question.wondering", H, (("host", "I was wondering where {nt} ended up."), ("who", "{N}, last I heard."))),
    Family(
        "question.would-know",
        H,
        (("alt", "Do we know {nt}?"), ("host", "{x} would know."), ("who", "It's {N}, I checked this morning.")),
    ),
    # --- aside: looks like an action item, is not -------------------------------------------------
    Family("aside.some-day", T, (("who", "We could {task} some day."), ("host", "Maybe, not now."))),
    Family(
        "aside.last-week",
        T,
        (("who", "The plan to {task} is done, by the way. I did that last week."), ("host", "Oh, nice.")),
    ),
    Family("aside.still-going", T, (("alt", "Is {o} still going to {otask}?"), ("who", "I think so, {o} said {od}."))),
    Family(
        "aside.if-time",
        T,
        (("host", "If we had time, someone would {task}, but we don't."), ("who", "Yeah, next quarter maybe.")),
    ),
    Family(
        "aside.ideal-world",
        H,
        (("who", "In an ideal world I'd {task} before the release."), ("host", "In an ideal world.")),
    ),
    Family(
        "aside.remember-when",
        H,
        (("who", "Remember when we had to {task}? That took forever."), ("host", "Don't remind me.")),
    ),
    Family(
        "aside.ask-them", H, (("host", "Did {o} ever manage to {otask}?"), ("who", "No idea, you'd have to ask {o}."))
    ),
    Family(
        "aside.at-some-point", H, (("alt", "Should we {task} at some point?"), ("who", "Not this sprint. Let's see."))
    ),
    Family(
        "aside.back-in-spring",
        H,
        (("who", "Back in the spring I had to {task}, so we know how it goes."), ("host", "True.")),
    ),
    # --- closing -----------------------------------------------------------------------------------
    Family("closing.thats-it", T, (("host", "Okay, I think that's it. Thanks everyone."), ("who", "Thanks."))),
    Family("closing.thanks-all", T, (("host", "Great, thanks all."), ("who", "Thanks, bye."))),
    Family("closing.all-i-had", T, (("host", "Alright, that's all I had. Thanks."), ("who", "Cheers."))),
    Family("closing.wrap-up", T, (("host", "Let's wrap up there."), ("who", "Thanks, talk soon."))),
    Family("closing.time-back", H, (("host", "I'll give you ten minutes back."), ("who", "Nice, thank you."))),
    Family(
        "closing.anything-else",
        H,
        (("host", "Anything else before we drop?"), ("who", "Nope, all good."), ("host", "Okay, bye all.")),
    ),
    Family(
        "closing.other-call",
        H,
        (("who", "Sorry, I have to jump to another call."), ("host", "Go, go. We're done anyway.")),
    ),
    Family("closing.next-week", H, (("host", "Same time next week then."), ("who", "See you then."))),
    Family("closing.notes", H, (("host", "I'll send the notes round after this."), ("who", "Thanks, {h}."))),
    # --- more held-out families, most of them for two people ------------------------------------------
    Family("greeting.on-time", H, (("host", "Hi both, right on time for once."), ("who", "Miracles happen."))),
    Family("small_talk.sun", H, (("host", "Nice to finally see some sun."), ("who", "I know, about time."))),
    Family(
        "small_talk.kids",
        H,
        (("who", "Sorry if you hear kids, school's closed today."), ("host", "No problem at all.")),
    ),
    Family("status.rundown", H, (("who", "Quick rundown on {t}. {S}. Also, {s2}."), ("host", "Thanks."))),
    Family("question.refresh", H, (("host", "Refresh my memory, {nt}?"), ("who", "{N}."))),
    Family(
        "question.double-check", H, (("who", "Can I double-check {nt}? Is it still {N}?"), ("host", "Still {N}, yes."))
    ),
    Family(
        "question.ballpark", H, (("host", "Roughly where's {nt} these days?"), ("who", "{N}, pretty much exactly."))
    ),
    Family("aside.one-day", H, (("host", "One day we should really {task}."), ("who", "One day."))),
    Family(
        "aside.used-to",
        H,
        (("who", "We used to {task} every release, before the tooling."), ("host", "Those were the days.")),
    ),
    Family("closing.good-one", H, (("host", "Good meeting, thanks all."), ("who", "Thanks, bye bye."))),
)
