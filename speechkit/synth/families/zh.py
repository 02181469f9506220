"""Chinese phrasing families of every act (:mod:`speechkit.synth.acts`), tuned and held-out.

The slots are the English tables' (:mod:`.items`, :mod:`.decisions`, :mod:`.talk`): ``{x}`` the
addressee, ``{y}`` a third attendee, ``{h}`` the host, ``{a}`` someone absent, ``{z}`` anyone
else; ``{task}`` a task (a verb phrase, also said as a noun phrase: ``{job}`` is the same text),
``{j}`` / ``{k}`` jargon, ``{d}`` / ``{d0}`` due days, ``{S}`` / ``{s}`` / ``{s2}`` statuses,
``{p}`` / ``{t}`` a project and its topic, ``{q}`` / ``{c}`` / ``{c0}`` a decision, ``{N}`` /
``{N0}`` / ``{nt}`` a number, its slip and what it measures, ``{o}`` / ``{otask}`` / ``{od}``
someone else's open item. Templates have no spaces; ``~`` starts a turn over the one before.
"""

from __future__ import annotations

from speechkit.synth.acts import LATER, Family

T, H = "tuned", "held-out"

FAMILIES = (
    # --- greeting ---------------------------------------------------------------------------------
    Family("greeting.zh-start", T, (("host", "好，那我们开始吧。"), ("who", "早上好。"))),
    Family("greeting.zh-quick", T, (("host", "大家早，今天我们快一点。"), ("who", "大家好。"))),
    Family("greeting.zh-all-here", T, (("host", "人应该到齐了，我们开始。"), ("who", "好的。"))),
    Family("greeting.zh-thanks-time", T, (("host", "{x}，谢谢你抽时间过来。"), ("who", "没事，最近挺忙的。"))),
    Family("greeting.zh-waiting", H, (("host", "还有人没进来吗？"), ("who", "应该没有了。"), ("host", "那我们开始。"))),
    Family("greeting.zh-hear-me", H, (("who", "能听到我说话吗？"), ("host", "听得很清楚，开始吧。"))),
    Family("greeting.zh-late", H, (("who", "不好意思，我晚了两分钟。"), ("host", "没关系，我们也刚开始。"))),
    Family("greeting.zh-weekend", H, (("host", "{x}，周末过得怎么样？"), ("who", "挺好的，就是太短了。"))),
    # --- small_talk -------------------------------------------------------------------------------
    Family("small_talk.zh-coffee", T, (("who", "楼下新开的咖啡店你们去过吗？"), ("host", "去过，还不错。"))),
    Family("small_talk.zh-rain", T, (("host", "你们那边也在下雨吗？"), ("who", "下得可大了。"))),
    Family("small_talk.zh-plans", T, (("who", "这周末有什么安排吗？"), ("host", "没什么，在家休息。"))),
    Family("small_talk.zh-lunch", T, (("who", "中午还一起吃饭吗？"), ("host", "一起，十二点半。"))),
    Family(
        "small_talk.zh-echo",
        H,
        (("host", "好像有人那边有回音。"), ("who", "是我，不好意思，现在呢？"), ("host", "好了。")),
    ),
    Family("small_talk.zh-traffic", H, (("who", "今天早上堵车堵得太厉害了。"), ("host", "别提了，我也是。"))),
    Family("small_talk.zh-holiday", H, (("host", "你什么时候休假来着？"), ("who", "下下周。"), ("host", "真羡慕。"))),
    Family("small_talk.zh-kids", H, (("who", "要是听到小孩的声音别介意，今天学校放假。"), ("host", "没事没事。"))),
    # --- status -----------------------------------------------------------------------------------
    Family("status.zh-where", T, (("host", "{x}，{p}现在什么进展？"), ("who", "{S}，另外{s2}。"))),
    Family("status.zh-update", T, (("host", "{x}，你简单说一下{t}吧。"), ("who", "好的。{S}，还有{s2}。"))),
    Family("status.zh-how", T, (("host", "{x}，{p}怎么样了？"), ("who", "{S}。另外{s2}。"))),
    Family("status.zh-where-with", T, (("host", "{x}，{t}做到哪一步了？"), ("who", "嗯，{s}。还有就是{s2}。"))),
    Family("status.zh-jump-in", H, (("who", "我先说一下{p}吧？{S}，而且{s2}。"), ("host", "你说。"))),
    Family("status.zh-your-turn", H, (("host", "{x}，到你了。"), ("who", "好，{p}这边，{S}。对了，{s2}。"))),
    Family("status.zh-anything-new", H, (("host", "{t}有什么新情况吗？"), ("who", "有一点。{S}，不过{s2}。"))),
    Family(
        "status.zh-cut-in",
        H,
        (
            ("who", "{p}这边，[呃]{s}，然后另外一个问题是"),
            ("~host", "等一下，是{j}那个吗？"),
            ("who", "对。还有{s2}。"),
        ),
    ),
    # --- request ----------------------------------------------------------------------------------
    Family("request.zh-can-you", T, (("host", "{x}，你能在{d}之前{task}吗？"), ("who", "可以，我{d}之前{task}。"))),
    Family("request.zh-trouble", T, (("host", "{x}，麻烦你{task}，{d}之前给我。"), ("who", "好的，没问题。"))),
    Family("request.zh-could", T, (("host", "{x}，你来{task}可以吗？最好{d}之前。"), ("who", "行，我来弄。"))),
    Family(
        "request.zh-due-corrected",
        T,
        (
            ("host", "{x}，你能{d0}之前{task}吗？"),
            ("who", "{d0}有点紧，不过可以。"),
            ("host", "算了，改成{d}吧，{d}更合适。"),
            ("who", "好，那就{d}。"),
        ),
        corrects="due",
    ),
    Family(
        "request.zh-needs-owner",
        H,
        (("host", "{job}这件事得有人负责。{x}，应该是你吧？"), ("who", "行，我{d}之前搞定。")),
    ),
    Family(
        "request.zh-declined",
        H,
        (
            ("host", "{x}，这周你有空{task}吗？"),
            ("who", "这周真不行，手上事太多了。要不问问{y}？"),
            ("alt", "我来吧。{d}可以吗？"),
            ("host", "{d}可以。"),
        ),
        owner="alt",
    ),
    Family(
        "request.zh-day-moved",
        H,
        (
            ("host", "{x}，你去{task}，就定{d0}吧。"),
            ("who", "{d0}啊，[呃]那天我请假。"),
            ("host", "哦对。那就{d}。"),
            ("who", "{d}没问题。"),
        ),
        corrects="due",
    ),
    Family(
        "request.zh-later",
        H,
        (
            ("host", "{x}，{job}你能接一下吗？"),
            ("who", "应该可以，我看一下这周的安排再回复你。"),
            LATER,
            ("who", "回到刚才{job}那件事，我看了，{d}之前能做完。"),
            ("host", "太好了。"),
        ),
    ),
    # --- volunteer --------------------------------------------------------------------------------
    Family("volunteer.zh-who-can", T, (("host", "谁能在{d}之前{task}？"), ("who", "我来吧。"))),
    Family("volunteer.zh-anyone", T, (("host", "有人能{task}吗？{d}之前要。"), ("who", "我来接。"))),
    Family("volunteer.zh-self-will", T, (("who", "我{d}之前{task}。"), ("host", "好，谢谢。")), asked=False),
    Family("volunteer.zh-self-can", T, (("who", "要不我来{task}吧，{d}之前。"), ("host", "好啊。")), asked=False),
    Family(
        "volunteer.zh-silence",
        H,
        (("host", "{job}总得有人管。"), ("who", "[嗯]那算我的吧。{d}。"), ("host", "谢谢{x}。")),
    ),
    Family(
        "volunteer.zh-on-me",
        H,
        (("who", "对了，反正我在弄那块，{job}就交给我，{d}应该能好。"), ("host", "辛苦了。")),
        asked=False,
    ),
    Family(
        "volunteer.zh-takers",
        H,
        (
            ("host", "{job}，谁有空？"),
            ("alt", "我倒是想，可是这周我基本不在。"),
            ("who", "那我来吧。给我到{d}。"),
            ("host", "成交。"),
        ),
    ),
    Family(
        "volunteer.zh-cut-in",
        H,
        (
            ("host", "{job}到现在还没人管，已经卡住了后面的"),
            ("~who", "我来。我本来就要看{j}。最晚{d}。"),
            ("host", "那更好。"),
        ),
    ),
    # --- absent -----------------------------------------------------------------------------------
    Family(
        "absent.zh-ask",
        T,
        (("host", "{a}今天不在，你能让{a}在{d}之前{task}吗？"), ("who", "好，我跟{a}说。")),
        owner="absent",
    ),
    Family(
        "absent.zh-should", T, (("host", "{a}应该在{d}之前{task}，我给{a}发个消息。"), ("who", "好。")), owner="absent"
    ),
    Family("absent.zh-give", T, (("host", "{job}就交给{a}吧，{d}之前。"), ("who", "行，我通知{a}。")), owner="absent"),
    Family(
        "absent.zh-agreed", T, (("host", "{a}会在{d}之前{task}，昨天说好了。"), ("who", "那就好。")), owner="absent"
    ),
    Family(
        "absent.zh-taking",
        H,
        (("who", "顺便说一下，{job}是{a}在弄，{a}说{d}。"), ("host", "哦，好，我还不知道。")),
        owner="absent",
        asked=False,
    ),
    Family(
        "absent.zh-what-if",
        H,
        (("who", "要不让{a}来{task}？{a}比我们都懂{j}。"), ("host", "好主意，我找{a}，{d}之前。")),
        owner="absent",
    ),
    Family(
        "absent.zh-day-fixed",
        H,
        (("host", "{job}是{a}负责，{d0}之前。"), ("who", "我记得{a}说的是{d}，不是{d0}。"), ("host", "对，那就{d}。")),
        owner="absent",
        corrects="due",
    ),
    Family(
        "absent.zh-out-today",
        H,
        (("host", "{a}今天请假，那{job}我先记在{a}名下，{d}。"), ("who", "可以。")),
        owner="absent",
    ),
    # --- follow_up --------------------------------------------------------------------------------
    Family("follow_up.zh-done", T, (("host", "{x}，{job}做了吗？"), ("who", "做完了。{S}。")), outcome="done"),
    Family(
        "follow_up.zh-open",
        T,
        (("host", "{x}，{job}做了吗？"), ("who", "还没有，我在等{z}那边的{k}。{d}应该还来得及。")),
        outcome="open",
    ),
    Family(
        "follow_up.zh-what-happened",
        T,
        (("host", "{x}，{job}后来怎么样了？"), ("who", "昨天弄完了。{S}。")),
        outcome="done",
    ),
    Family("follow_up.zh-any-update", T, (("host", "{job}有进展吗？"), ("who", "还在做，还是按{d}。")), outcome="open"),
    Family(
        "follow_up.zh-self-report", H, (("who", "说一下，{job}我做完了。{S}。"), ("host", "不错。")), outcome="done"
    ),
    Family(
        "follow_up.zh-remind",
        H,
        (("host", "{x}，我记得上次{job}是你的吧？"), ("who", "对，还在弄，还是说好的{d}。")),
        outcome="open",
    ),
    Family(
        "follow_up.zh-stuck",
        H,
        (("who", "{job}我还卡着，{z}一直没回我。尽量还是{d}。"), ("host", "要是延期了跟我说一声。")),
        outcome="open",
    ),
    Family(
        "follow_up.zh-closed",
        H,
        (("host", "{x}，我看到{job}你已经关掉了。"), ("who", "对，这周做完的。")),
        outcome="done",
    ),
    # --- decision ---------------------------------------------------------------------------------
    Family(
        "decision.zh-choose",
        T,
        (
            ("host", "我们得定一下{q}，要么{c}，要么{c0}。"),
            ("who", "我倾向{c}，另一个工作量太大。"),
            ("host", "好，那就{c}。"),
        ),
    ),
    Family("decision.zh-or", T, (("host", "{q}，{c}还是{c0}？"), ("who", "我觉得{c}。"), ("host", "那就定{c}。"))),
    Family("decision.zh-decided", T, (("host", "{q}我定了，就{c}。"), ("who", "我没意见。"))),
    Family(
        "decision.zh-scrap",
        T,
        (
            ("host", "{q}，我们就{c0}吧。"),
            ("who", "等等，{c0}会影响{j}的进度。"),
            ("host", "有道理。那不这么做了，还是{c}。"),
        ),
        corrects="choice",
    ),
    Family(
        "decision.zh-objection",
        H,
        (
            ("who", "{q}我本来想的是{c0}。"),
            ("alt", "我不太确定，那样{j}的工作要重做。"),
            ("who", "嗯，也是。那{c}？"),
            ("host", "就{c}。"),
        ),
    ),
    Family("decision.zh-no-objection", H, (("host", "如果没人反对，{q}就{c}。"), ("host", "没有？好，就这么定了。"))),
    Family(
        "decision.zh-stay",
        H,
        (
            ("host", "{q}我们之前说的是{c0}，对吧？"),
            ("who", "是，不过出了{j}那个问题以后，我觉得不太好。"),
            ("host", "同意。不，我们还是{c}。"),
        ),
        corrects="choice",
    ),
    Family(
        "decision.zh-parked",
        H,
        (
            ("host", "{q}先放一放，{c}还是{c0}，我再想想。"),
            LATER,
            ("host", "回到{q}。我想了一下，{c}。"),
            ("who", "我觉得可以。"),
        ),
    ),
    # --- number -----------------------------------------------------------------------------------
    Family("number.zh-is", T, (("who", "{nt}现在是{N}。"),)),
    Family("number.zh-stays", T, (("who", "还有，{nt}保持在{N}。"),)),
    Family("number.zh-came-in", T, (("who", "{nt}最后是{N}。"),)),
    Family("number.zh-sorry", T, (("who", "{nt}是{N0}，不好意思，是{N}。"),), corrects="number"),
    Family("number.zh-last-looked", H, (("who", "我上次看的时候，{nt}大概在{N}。"),)),
    Family("number.zh-still-right", H, (("host", "{nt}是{N}，现在还对吗？"), ("who", "对，还是这个数。"))),
    Family(
        "number.zh-set-straight",
        H,
        (("who", "{nt}，是{N0}。"), ("alt", "我记得现在是{N}了，上周改过。"), ("who", "哦对，{N}。")),
        corrects="number",
    ),
    Family("number.zh-restart", H, (("who", "那个{nt}，是，[呃]{N0}，不对，等一下，{N}。"),), corrects="number"),
    # --- question ---------------------------------------------------------------------------------
    Family("question.zh-what-is", T, (("host", "{nt}现在是多少？"), ("who", "是{N}。"))),
    Family("question.zh-again", T, (("host", "不好意思，{nt}是多少来着？"), ("who", "{N}，今天早上的数。"))),
    Family("question.zh-include", T, (("host", "这个包括{j}吗？"), ("who", "包括，{j}也算在里面。"))),
    Family("question.zh-what-about", T, (("host", "那{j}呢？"), ("who", "还没有，下一个就是{j}。"))),
    Family("question.zh-landed", H, (("host", "提醒我一下，{nt}最后定的是多少？"), ("who", "最后是{N}。"))),
    Family("question.zh-cut-in", H, (("host", "还有{nt}，是不是还跟"), ("~who", "{N}，跟上次一样。"))),
    Family("question.zh-tag", H, (("host", "{j}也覆盖到了，是吧？"), ("who", "一部分。{j}还要{z}再看一下。"))),
    Family("question.zh-ballpark", H, (("host", "{nt}最近大概在什么水平？"), ("who", "{N}，基本就是这个数。"))),
    # --- aside ------------------------------------------------------------------------------------
    Family("aside.zh-some-day", T, (("who", "以后有机会我们可以{task}。"), ("host", "也许吧，现在不急。"))),
    Family("aside.zh-last-week", T, (("who", "对了，{job}已经做过了，上周弄的。"), ("host", "哦，不错。"))),
    Family("aside.zh-still-going", T, (("host", "{o}还要{otask}吗？"), ("who", "应该是，{o}说{od}。"))),
    Family(
        "aside.zh-if-time", T, (("host", "要是有时间，应该有人{task}，可惜没时间。"), ("who", "是啊，下个季度吧。"))
    ),
    Family("aside.zh-ideal", H, (("who", "理想情况下，我会在发版之前{task}。"), ("host", "理想情况下。"))),
    Family("aside.zh-remember", H, (("who", "还记得上次我们{task}吗？搞了好久。"), ("host", "别提了。"))),
    Family("aside.zh-ask-them", H, (("host", "{o}后来{otask}了吗？"), ("who", "不知道，你得问{o}。"))),
    Family(
        "aside.zh-used-to", H, (("who", "以前每次发版我们都要{task}，那时候还没有工具。"), ("host", "那时候真辛苦。"))
    ),
    # --- closing ----------------------------------------------------------------------------------
    Family("closing.zh-thats-it", T, (("host", "好，今天就到这儿，谢谢大家。"), ("who", "谢谢。"))),
    Family("closing.zh-thanks", T, (("host", "好的，谢谢各位。"), ("who", "谢谢，拜拜。"))),
    Family("closing.zh-all-i-had", T, (("host", "我要说的就这些，谢谢。"), ("who", "好的。"))),
    Family("closing.zh-wrap", T, (("host", "那我们就先到这里。"), ("who", "好，回头聊。"))),
    Family("closing.zh-time-back", H, (("host", "提前十分钟结束吧。"), ("who", "太好了，谢谢。"))),
    Family(
        "closing.zh-anything-else", H, (("host", "走之前还有别的事吗？"), ("who", "没有了。"), ("host", "好，拜拜。"))
    ),
    Family("closing.zh-next-week", H, (("host", "那下周同一时间。"), ("who", "下周见。"))),
    Family("closing.zh-notes", H, (("host", "会后我把纪要发给大家。"), ("who", "谢谢{h}。"))),
)
