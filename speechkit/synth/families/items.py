"""Families of the acts that open or check action items: ``request`` (the host asks someone
present), ``volunteer`` (nobody is named and someone takes it, or someone takes it unasked),
``absent`` (the item goes to someone not in the meeting), ``follow_up`` (an open item of an
earlier meeting is checked on).

Slots: ``{x}`` the addressee (``who``), ``{y}`` a third attendee (``alt``), ``{h}`` the host,
``{a}`` an absent person, ``{z}`` anyone else in the organisation, ``{task}`` the task (with
its jargon ``{j}``), ``{job}`` the same as a noun phrase ("mapping the fields"), ``{k}``
another jargon term, ``{d}`` the due day, ``{d0}`` a due day said first and corrected,
``{S}`` a status phrase (capitalised).
"""

from __future__ import annotations

from speechkit.synth.acts import LATER, Family

T, H = "tuned", "held-out"

FAMILIES = (
    # --- request: the host asks someone present -----------------------------------------------------
    Family("request.can-you", T, (("host", "{x}, can you {task} by {d}?"), ("who", "Sure, I'll {task} by {d}."))),
    Family("request.could-you", T, (("host", "{x}, could you {task} by {d}?"), ("who", "Yeah, I can do that."))),
    Family("request.would-you", T, (("host", "{x}, would you {task}? Ideally by {d}."), ("who", "Okay, will do."))),
    Family(
        "request.due-corrected",
        T,
        (
            ("host", "{x}, can you {task} by {d0}?"),
            ("who", "{d0} is tight, but sure."),
            ("host", "Actually, make that {d}, that works better."),
            ("who", "Okay, {d} then."),
        ),
        corrects="due",
    ),
    Family(
        "request.needs-someone",
        H,
        (
            ("host", "I think {job} needs an owner. {x}, that's probably you?"),
            ("who", "Yeah, fair. I'll have it by {d}."),
        ),
    ),
    Family("request.got-it-right", H, (("host", "{x}'s got {job}, right? For {d}."), ("who", "That's right."))),
    Family(
        "request.declined",
        H,
        (
            ("host", "{x}, any chance you'd {task} this week?"),
            ("who", "I can't this week, I'm buried. Maybe {y}?"),
            ("alt", "Yeah, I'll take it. {d} okay?"),
            ("host", "{d} works."),
        ),
        owner="alt",
    ),
    Family(
        "request.yours",
        H,
        (("host", "Then {job}. {x}, that one's yours. Is {d} realistic?"), ("who", "{d} is fine, yes.")),
    ),
    Family(
        "request.day-moved",
        H,
        (
            ("host", "{x}, I'd like you to {task}, let's say {d0}."),
            ("who", "Hmm, {d0}, [uh] I'm out that day."),
            ("host", "Oh right. Then {d}."),
            ("who", "{d} works."),
        ),
        corrects="due",
    ),
    Family(
        "request.cut-in",
        H,
        (
            ("host", "{x}, when you get a minute, I need someone who knows {j} to"),
            ("~who", "To {task}? I'll do it, by {d}."),
            ("host", "Perfect, thanks."),
        ),
    ),
    Family(
        "request.confirmed-later",
        H,
        (
            ("host", "{x}, {job}, is that something you'd pick up?"),
            ("who", "Probably. Let me check my week and come back to you."),
            LATER,
            ("who", "Going back to {job}, I checked, I'll have it by {d}."),
            ("host", "Great."),
        ),
    ),
    # --- volunteer: no name, or nobody asked ---------------------------------------------------------
    Family("volunteer.who-can", T, (("host", "Who can {task} by {d}?"), ("who", "I can do that."))),
    Family("volunteer.anyone", T, (("host", "Can anyone {task}? We need it by {d}."), ("who", "I'll take it."))),
    Family("volunteer.self-will", T, (("who", "I'll {task} by {d}."), ("host", "Great, thanks.")), asked=False),
    Family(
        "volunteer.self-can", T, (("who", "I can {task} by {d} if that helps."), ("host", "Yes please.")), asked=False
    ),
    Family(
        "volunteer.silence",
        H,
        (
            ("host", "Somebody needs to own {job}."),
            ("who", "[um] Fine, put me down for it. {d}."),
            ("host", "Thanks, {x}."),
        ),
    ),
    Family(
        "volunteer.on-me",
        H,
        (("who", "Oh, and since I'm in there anyway, {job} is on me. Should be done {d}."), ("host", "Appreciated.")),
        asked=False,
    ),
    Family(
        "volunteer.any-takers",
        H,
        (
            ("host", "{job}, any takers?"),
            ("alt", "I'd love to, but I'm out most of the week."),
            ("who", "I'll grab it then. Give me until {d}."),
            ("host", "Deal."),
        ),
    ),
    Family(
        "volunteer.cut-in",
        H,
        (
            ("host", "We still don't have anyone on {job}, and it's blocking the"),
            ("~who", "I'll take it. I was going to look at {j} anyway. {d} at the latest."),
            ("host", "Even better."),
        ),
    ),
    Family(
        "volunteer.later",
        H,
        (
            ("host", "Does someone have room for {job}?"),
            ("who", "Maybe me, let me look at what else I have."),
            LATER,
            ("who", "By the way, I do have room, so {job} is mine. {d}."),
            ("host", "Noted."),
        ),
    ),
    Family(
        "volunteer.let-me",
        H,
        (("who", "Let me take {job}, I've done it before. {d}?"), ("host", "Sure, {d} is fine.")),
        asked=False,
    ),
    # --- absent: the item goes to someone not in the meeting -----------------------------------------
    Family(
        "absent.can-you-ask",
        T,
        (("host", "{a} isn't here, but can you ask {a} to {task} by {d}?"), ("who", "Sure, I'll tell {a}.")),
        owner="absent",
    ),
    Family(
        "absent.should",
        T,
        (("host", "{a} should {task} by {d}. I'll send {a} a note."), ("who", "Makes sense.")),
        owner="absent",
    ),
    Family(
        "absent.give-to",
        T,
        (("host", "Let's give {job} to {a}, due {d}."), ("who", "Okay, I'll let {a} know.")),
        owner="absent",
    ),
    Family(
        "absent.will", T, (("host", "{a} will {task} by {d}, we agreed yesterday."), ("who", "Good.")), owner="absent"
    ),
    Family(
        "absent.have-look",
        H,
        (("host", "Let's have {a} {task}. End of day {d} is fine."), ("who", "I'll pass it on.")),
        owner="absent",
    ),
    Family(
        "absent.taking",
        H,
        (("who", "{a}'s taking {job}, by the way. {a} said {d}."), ("host", "Oh good, I didn't know.")),
        owner="absent",
        asked=False,
    ),
    Family(
        "absent.what-if",
        H,
        (
            ("who", "What if {a} took {job}? {a} knows {j} better than any of us."),
            ("host", "Good idea. I'll ask {a} for {d}."),
        ),
        owner="absent",
    ),
    Family(
        "absent.day-fixed",
        H,
        (
            ("host", "{a} is on {job}, due {d0}."),
            ("who", "I think {a} said {d}, not {d0}."),
            ("host", "Right, {d} then."),
        ),
        owner="absent",
        corrects="due",
    ),
    Family(
        "absent.offered",
        H,
        (
            ("who", "{a} pinged me before this, [uh] offered to {task}. {d} is the plan."),
            ("host", "Great, put it down for {a}."),
        ),
        owner="absent",
        asked=False,
    ),
    # --- follow_up: an open item of an earlier meeting -----------------------------------------------
    Family(
        "follow_up.chance-done",
        T,
        (("host", "{x}, did you get a chance to {task}?"), ("who", "Yes, that's done. {S}.")),
        outcome="done",
    ),
    Family(
        "follow_up.chance-open",
        T,
        (
            ("host", "{x}, did you get a chance to {task}?"),
            ("who", "Not yet, I'm waiting on {z} for {k}. Still on track for {d}."),
        ),
        outcome="open",
    ),
    Family(
        "follow_up.what-happened",
        T,
        (("host", "What happened with {job}, {x}?"), ("who", "Finished it yesterday. {S}.")),
        outcome="done",
    ),
    Family(
        "follow_up.any-update",
        T,
        (("host", "Any update on {job}?"), ("who", "Still in progress, {d} is still the plan.")),
        outcome="open",
    ),
    Family(
        "follow_up.self-report", H, (("who", "Quick one, I finished {job}. {S}."), ("host", "Nice.")), outcome="done"
    ),
    Family(
        "follow_up.remind-me",
        H,
        (
            ("host", "Remind me, {x}, you had {job} from last time?"),
            ("who", "Yeah, still on it. It'll be {d} like we said."),
        ),
        outcome="open",
    ),
    Family(
        "follow_up.asked-by-other",
        H,
        (
            ("alt", "Wasn't {x} on {job}?"),
            ("who", "Done, I merged it this morning."),
            ("host", "Great, one less thing."),
        ),
        outcome="done",
    ),
    Family(
        "follow_up.cut-in",
        H,
        (
            ("host", "Before I forget, {x}, the thing from last time, {job}, how far"),
            ("~who", "All done. I sent the notes round."),
            ("host", "Perfect."),
        ),
        outcome="done",
    ),
    Family(
        "follow_up.stuck",
        H,
        (
            ("who", "I'm still stuck on {job}, {z} hasn't gotten back to me. I'll keep {d} if I can."),
            ("host", "Let me know if it slips."),
        ),
        outcome="open",
    ),
    # --- more held-out families, for two people ---------------------------------------------------------
    Family(
        "absent.out-today",
        H,
        (("host", "{a} is out today, so I'll put {job} down for {a}, {d}."), ("who", "Fair enough.")),
        owner="absent",
    ),
    Family(
        "follow_up.closed-out",
        H,
        (("host", "I saw you closed out {job}, {x}."), ("who", "Yep, finished it this week.")),
        outcome="done",
    ),
)
