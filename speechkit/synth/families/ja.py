"""Japanese phrasing families of every act (:mod:`speechkit.synth.acts`), tuned and held-out.

The slots are the English tables' (:mod:`.zh` lists them); people are called by surname with
さん after it (``{x}さん``), a task (``{task}``, ``{job}``) is a noun phrase ("…の更新") taken
with を or は, a status (``{S}``, ``{s}``) a clause in the polite past or present. Templates have
no spaces; ``~`` starts a turn over the one before.
"""

from __future__ import annotations

from speechkit.synth.acts import LATER, Family

T, H = "tuned", "held-out"

FAMILIES = (
    # --- greeting ---------------------------------------------------------------------------------
    Family("greeting.ja-start", T, (("host", "では、始めましょうか。"), ("who", "おはようございます。"))),
    Family(
        "greeting.ja-quick",
        T,
        (("host", "皆さんおはようございます。手短にいきましょう。"), ("who", "よろしくお願いします。")),
    ),
    Family(
        "greeting.ja-all-here", T, (("host", "全員そろったみたいなので、始めます。"), ("who", "はい、お願いします。"))
    ),
    Family(
        "greeting.ja-thanks-time",
        T,
        (("host", "{x}さん、お時間ありがとうございます。"), ("who", "いえいえ、最近バタバタしてて。")),
    ),
    Family(
        "greeting.ja-waiting",
        H,
        (("host", "まだ来ていない人はいますか？"), ("who", "いないと思います。"), ("host", "じゃあ始めましょう。")),
    ),
    Family(
        "greeting.ja-hear-me", H, (("who", "声、聞こえてますか？"), ("host", "はい、よく聞こえます。始めましょう。"))
    ),
    Family(
        "greeting.ja-late",
        H,
        (("who", "すみません、少し遅れました。"), ("host", "大丈夫です、いま始めたところです。")),
    ),
    Family(
        "greeting.ja-weekend",
        H,
        (("host", "{x}さん、週末はどうでしたか？"), ("who", "よかったです。短かったですけど。")),
    ),
    # --- small_talk -------------------------------------------------------------------------------
    Family(
        "small_talk.ja-coffee",
        T,
        (("who", "一階の新しいカフェ、行きました？"), ("host", "行きました。けっこうおいしいですよ。")),
    ),
    Family("small_talk.ja-rain", T, (("host", "そちらも雨ですか？"), ("who", "すごい降ってます。"))),
    Family("small_talk.ja-plans", T, (("who", "週末は何か予定ありますか？"), ("host", "特に。家でゆっくりします。"))),
    Family("small_talk.ja-lunch", T, (("who", "お昼、一緒に行きますよね？"), ("host", "はい、十二時半に。"))),
    Family(
        "small_talk.ja-echo",
        H,
        (
            ("host", "どなたか音が反響してますね。"),
            ("who", "あ、私です、すみません。どうですか？"),
            ("host", "大丈夫です。"),
        ),
    ),
    Family("small_talk.ja-train", H, (("who", "けさの電車、すごく混んでました。"), ("host", "わかります、私もです。"))),
    Family(
        "small_talk.ja-holiday",
        H,
        (("host", "休暇っていつからでしたっけ？"), ("who", "再来週です。"), ("host", "いいですね。")),
    ),
    Family(
        "small_talk.ja-kids",
        H,
        (("who", "子どもの声が聞こえたらすみません、学校が休みで。"), ("host", "全然大丈夫です。")),
    ),
    # --- status -----------------------------------------------------------------------------------
    Family("status.ja-where", T, (("host", "{x}さん、{p}の状況はどうですか？"), ("who", "{S}。あと、{s2}。"))),
    Family(
        "status.ja-update",
        T,
        (("host", "{x}さん、{t}について簡単に共有してもらえますか？"), ("who", "はい。{S}。それから{s2}。")),
    ),
    Family("status.ja-how", T, (("host", "{x}さん、{p}はどんな感じですか？"), ("who", "{S}。ほかに、{s2}。"))),
    Family(
        "status.ja-where-with",
        T,
        (("host", "{x}さん、{t}はどこまで進みましたか？"), ("who", "えーと、{s}。あと{s2}。")),
    ),
    Family("status.ja-jump-in", H, (("who", "先に{p}の話をしてもいいですか？{S}。それと{s2}。"), ("host", "どうぞ。"))),
    Family(
        "status.ja-your-turn", H, (("host", "{x}さん、お願いします。"), ("who", "はい、{p}ですが、{S}。あ、あと{s2}。"))
    ),
    Family(
        "status.ja-anything-new",
        H,
        (("host", "{t}で何か新しいことはありますか？"), ("who", "少しあります。{S}。ただ、{s2}。")),
    ),
    Family(
        "status.ja-cut-in",
        H,
        (
            ("who", "{p}ですが、[あの]{s}。それで、もう一つの件が"),
            ("~host", "すみません、それって{j}の件ですか？"),
            ("who", "そうです。あと{s2}。"),
        ),
    ),
    # --- request ----------------------------------------------------------------------------------
    Family(
        "request.ja-can-you",
        T,
        (("host", "{x}さん、{d}までに{task}をお願いできますか？"), ("who", "はい、{d}までに{task}をやります。")),
    ),
    Family("request.ja-please", T, (("host", "{x}さん、{task}をお願いします。{d}までに。"), ("who", "わかりました。"))),
    Family(
        "request.ja-could",
        T,
        (("host", "{x}さん、{task}を担当してもらえますか？できれば{d}までに。"), ("who", "了解です。")),
    ),
    Family(
        "request.ja-due-corrected",
        T,
        (
            ("host", "{x}さん、{d0}までに{task}をお願いできますか？"),
            ("who", "{d0}はちょっときついですが、大丈夫です。"),
            ("host", "やっぱり{d}にしましょう。そのほうがいいので。"),
            ("who", "では{d}で。"),
        ),
        corrects="due",
    ),
    Family(
        "request.ja-needs-owner",
        H,
        (
            ("host", "{job}は誰かが持たないといけないですね。{x}さん、お願いできます？"),
            ("who", "はい、{d}までにやります。"),
        ),
    ),
    Family(
        "request.ja-declined",
        H,
        (
            ("host", "{x}さん、今週{task}をお願いできますか？"),
            ("who", "今週はちょっと手が回らないです。{y}さんはどうですか？"),
            ("alt", "私がやります。{d}でいいですか？"),
            ("host", "{d}で大丈夫です。"),
        ),
        owner="alt",
    ),
    Family(
        "request.ja-day-moved",
        H,
        (
            ("host", "{x}さん、{task}をお願いします。{d0}でどうでしょう。"),
            ("who", "{d0}ですか、[えーと]そのひは休みなんです。"),
            ("host", "あ、そうでした。じゃあ{d}で。"),
            ("who", "{d}なら大丈夫です。"),
        ),
        corrects="due",
    ),
    Family(
        "request.ja-later",
        H,
        (
            ("host", "{x}さん、{job}を引き受けてもらえますか？"),
            ("who", "たぶん大丈夫です。今週の予定を見てから返事します。"),
            LATER,
            ("who", "さっきの{job}ですが、確認しました。{d}までにできます。"),
            ("host", "助かります。"),
        ),
    ),
    # --- volunteer --------------------------------------------------------------------------------
    Family("volunteer.ja-who-can", T, (("host", "{d}までに{task}をできる人はいますか？"), ("who", "私がやります。"))),
    Family(
        "volunteer.ja-anyone",
        T,
        (("host", "どなたか{task}をお願いできますか？{d}までに必要です。"), ("who", "私が引き受けます。")),
    ),
    Family(
        "volunteer.ja-self-will",
        T,
        (("who", "{d}までに{task}をやっておきます。"), ("host", "ありがとうございます。")),
        asked=False,
    ),
    Family(
        "volunteer.ja-self-can",
        T,
        (("who", "よければ{task}は私がやりますよ。{d}までに。"), ("host", "ぜひお願いします。")),
        asked=False,
    ),
    Family(
        "volunteer.ja-silence",
        H,
        (
            ("host", "{job}は誰かが担当しないと。"),
            ("who", "[えーと]じゃあ私がやります。{d}で。"),
            ("host", "ありがとう、{x}さん。"),
        ),
    ),
    Family(
        "volunteer.ja-on-me",
        H,
        (
            ("who", "あ、どうせそこを触っているので、{job}は私がやります。{d}には終わると思います。"),
            ("host", "助かります。"),
        ),
        asked=False,
    ),
    Family(
        "volunteer.ja-takers",
        H,
        (
            ("host", "{job}、誰か手が空いてますか？"),
            ("alt", "やりたいんですが、今週はほとんどいないんです。"),
            ("who", "じゃあ私が。{d}までください。"),
            ("host", "決まりですね。"),
        ),
    ),
    Family(
        "volunteer.ja-cut-in",
        H,
        (
            ("host", "{job}がまだ誰にも割り当たってなくて、そのせいで後ろの作業が"),
            ("~who", "私がやります。どうせ{j}を見るつもりだったので。遅くとも{d}には。"),
            ("host", "それは助かります。"),
        ),
    ),
    # --- absent -----------------------------------------------------------------------------------
    Family(
        "absent.ja-ask",
        T,
        (
            ("host", "{a}さんは今日いませんが、{d}までに{task}をやるよう伝えてもらえますか？"),
            ("who", "はい、{a}さんに伝えます。"),
        ),
        owner="absent",
    ),
    Family(
        "absent.ja-should",
        T,
        (("host", "{a}さんに{d}までに{task}をやってもらいます。私から連絡しておきます。"), ("who", "いいと思います。")),
        owner="absent",
    ),
    Family(
        "absent.ja-give",
        T,
        (
            ("host", "{job}は{a}さんにお願いしましょう。期限は{d}で。"),
            ("who", "わかりました、{a}さんに言っておきます。"),
        ),
        owner="absent",
    ),
    Family(
        "absent.ja-agreed",
        T,
        (("host", "{a}さんが{d}までに{task}をやります。昨日そう決めました。"), ("who", "よかったです。")),
        owner="absent",
    ),
    Family(
        "absent.ja-taking",
        H,
        (
            ("who", "ちなみに{job}は{a}さんがやってます。{a}さんは{d}と言ってました。"),
            ("host", "そうなんですね、知りませんでした。"),
        ),
        owner="absent",
        asked=False,
    ),
    Family(
        "absent.ja-what-if",
        H,
        (
            ("who", "{job}は{a}さんにお願いしたらどうですか？{j}は{a}さんが一番詳しいので。"),
            ("host", "いいですね。{d}で頼んでみます。"),
        ),
        owner="absent",
    ),
    Family(
        "absent.ja-day-fixed",
        H,
        (
            ("host", "{job}は{a}さんの担当で、期限は{d0}です。"),
            ("who", "{a}さんは{d0}じゃなくて{d}と言っていた気がします。"),
            ("host", "そうでした、じゃあ{d}で。"),
        ),
        owner="absent",
        corrects="due",
    ),
    Family(
        "absent.ja-out-today",
        H,
        (
            ("host", "{a}さんは今日お休みなので、{job}は{a}さんの名前で入れておきます。{d}で。"),
            ("who", "いいと思います。"),
        ),
        owner="absent",
    ),
    # --- follow_up --------------------------------------------------------------------------------
    Family(
        "follow_up.ja-done",
        T,
        (("host", "{x}さん、{job}はできましたか？"), ("who", "はい、終わりました。{S}。")),
        outcome="done",
    ),
    Family(
        "follow_up.ja-open",
        T,
        (
            ("host", "{x}さん、{job}はできましたか？"),
            ("who", "まだです。{z}さんの{k}待ちです。{d}には間に合いそうです。"),
        ),
        outcome="open",
    ),
    Family(
        "follow_up.ja-what-happened",
        T,
        (("host", "{x}さん、{job}はその後どうなりました？"), ("who", "昨日終わりました。{S}。")),
        outcome="done",
    ),
    Family(
        "follow_up.ja-any-update",
        T,
        (("host", "{job}の進捗はどうですか？"), ("who", "まだ作業中です。予定どおり{d}です。")),
        outcome="open",
    ),
    Family(
        "follow_up.ja-self-report",
        H,
        (("who", "一点だけ、{job}は終わりました。{S}。"), ("host", "いいですね。")),
        outcome="done",
    ),
    Family(
        "follow_up.ja-remind",
        H,
        (
            ("host", "{x}さん、前回の{job}は{x}さんの担当でしたよね？"),
            ("who", "はい、まだやってます。約束どおり{d}です。"),
        ),
        outcome="open",
    ),
    Family(
        "follow_up.ja-stuck",
        H,
        (
            ("who", "{job}はまだ止まってます。{z}さんから返事がなくて。できれば{d}は守ります。"),
            ("host", "遅れそうなら言ってください。"),
        ),
        outcome="open",
    ),
    Family(
        "follow_up.ja-closed",
        H,
        (("host", "{x}さん、{job}、クローズしてましたね。"), ("who", "はい、今週終わらせました。")),
        outcome="done",
    ),
    # --- decision ---------------------------------------------------------------------------------
    Family(
        "decision.ja-choose",
        T,
        (
            ("host", "{q}を決めないといけません。{c}か{c0}です。"),
            ("who", "私は{c}がいいと思います。もう一つは手間がかかりすぎるので。"),
            ("host", "では{c}でいきましょう。"),
        ),
    ),
    Family(
        "decision.ja-or",
        T,
        (("host", "{q}ですが、{c}と{c0}、どちらにしますか？"), ("who", "{c}ですかね。"), ("host", "{c}にしましょう。")),
    ),
    Family("decision.ja-decided", T, (("host", "{q}は決めました。{c}でいきます。"), ("who", "異論ありません。"))),
    Family(
        "decision.ja-scrap",
        T,
        (
            ("host", "{q}は{c0}にしましょう。"),
            ("who", "待ってください、{c0}だと{j}のスケジュールに影響します。"),
            ("host", "確かに。やっぱりやめて、{c}にしましょう。"),
        ),
        corrects="choice",
    ),
    Family(
        "decision.ja-objection",
        H,
        (
            ("who", "{q}は{c0}がいいかと思っていたんですが。"),
            ("alt", "うーん、それだと{j}の作業をやり直すことになりますよ。"),
            ("who", "たしかに。じゃあ{c}ですか？"),
            ("host", "{c}で決まりです。"),
        ),
    ),
    Family(
        "decision.ja-no-objection",
        H,
        (("host", "反対がなければ、{q}は{c}にします。"), ("host", "ないですね。では決定です。")),
    ),
    Family(
        "decision.ja-stay",
        H,
        (
            ("host", "{q}は{c0}と言ってましたよね？"),
            ("who", "はい、でも{j}の問題があったので、やめたほうがいいと思います。"),
            ("host", "そうですね。いや、やっぱり{c}のままでいきましょう。"),
        ),
        corrects="choice",
    ),
    Family(
        "decision.ja-parked",
        H,
        (
            ("host", "{q}はいったん保留にします。{c}か{c0}か、少し考えさせてください。"),
            LATER,
            ("host", "{q}に戻ります。考えましたが、{c}にします。"),
            ("who", "いいと思います。"),
        ),
    ),
    # --- number -----------------------------------------------------------------------------------
    Family("number.ja-is", T, (("who", "{nt}はいま{N}です。"),)),
    Family("number.ja-stays", T, (("who", "それと、{nt}は{N}のままです。"),)),
    Family("number.ja-came-in", T, (("who", "{nt}は{N}でした。"),)),
    Family("number.ja-sorry", T, (("who", "{nt}は{N0}、すみません、{N}です。"),), corrects="number"),
    Family("number.ja-last-looked", H, (("who", "最後に見たときは、{nt}は{N}くらいでした。"),)),
    Family("number.ja-still-right", H, (("host", "{nt}は{N}で、まだ合ってますか？"), ("who", "はい、合ってます。"))),
    Family(
        "number.ja-set-straight",
        H,
        (
            ("who", "{nt}は{N0}です。"),
            ("alt", "いまは{N}だと思います。先週変わったので。"),
            ("who", "あ、そうでした、{N}です。"),
        ),
        corrects="number",
    ),
    Family(
        "number.ja-restart",
        H,
        (("who", "で、{nt}は、[えーと]{N0}、いや、ちょっと待って、{N}です。"),),
        corrects="number",
    ),
    # --- question ---------------------------------------------------------------------------------
    Family("question.ja-what-is", T, (("host", "{nt}はいまいくつですか？"), ("who", "{N}です。"))),
    Family(
        "question.ja-again", T, (("host", "すみません、{nt}はいくつでしたっけ？"), ("who", "{N}です。けさの時点で。"))
    ),
    Family("question.ja-include", T, (("host", "それには{j}も含まれますか？"), ("who", "はい、{j}も入っています。"))),
    Family("question.ja-what-about", T, (("host", "{j}はどうですか？"), ("who", "まだです。次が{j}です。"))),
    Family("question.ja-landed", H, (("host", "{nt}は結局いくつになりましたっけ？"), ("who", "{N}に落ち着きました。"))),
    Family("question.ja-cut-in", H, (("host", "あと{nt}ですが、まだ前回と"), ("~who", "{N}です。前回と同じです。"))),
    Family(
        "question.ja-tag",
        H,
        (("host", "{j}もカバーできてますよね？"), ("who", "一部だけです。{j}はまだ{z}さんのレビューが必要です。")),
    ),
    Family(
        "question.ja-ballpark",
        H,
        (("host", "{nt}は最近だいたいどのくらいですか？"), ("who", "{N}です。ほぼその数字です。")),
    ),
    # --- aside ------------------------------------------------------------------------------------
    Family(
        "aside.ja-some-day",
        T,
        (("who", "いつか{task}をやってもいいですね。"), ("host", "そうですね、今じゃないですけど。")),
    ),
    Family(
        "aside.ja-last-week",
        T,
        (("who", "ちなみに{job}はもう済んでます。先週やりました。"), ("host", "お、いいですね。")),
    ),
    Family(
        "aside.ja-still-going",
        T,
        (("host", "{o}さんはまだ{otask}をやる予定ですか？"), ("who", "たぶん。{o}さんは{od}と言ってました。")),
    ),
    Family(
        "aside.ja-if-time",
        T,
        (("host", "時間があれば誰かが{task}をやるべきなんですが、ないですね。"), ("who", "来期ですかね。")),
    ),
    Family(
        "aside.ja-ideal", H, (("who", "理想を言えば、リリース前に{task}をやりたいです。"), ("host", "理想を言えばね。"))
    ),
    Family(
        "aside.ja-remember",
        H,
        (
            ("who", "前に{task}をやったとき、覚えてます？すごく時間かかりましたよね。"),
            ("host", "思い出させないでください。"),
        ),
    ),
    Family(
        "aside.ja-ask-them",
        H,
        (("host", "{o}さんは結局{otask}をやったんですか？"), ("who", "わかりません、{o}さんに聞いてください。")),
    ),
    Family(
        "aside.ja-used-to",
        H,
        (("who", "ツールができる前は、毎回リリースのたびに{task}をやってましたね。"), ("host", "懐かしいですね。")),
    ),
    # --- closing ----------------------------------------------------------------------------------
    Family(
        "closing.ja-thats-it",
        T,
        (("host", "では、今日はこれで終わりです。ありがとうございました。"), ("who", "ありがとうございました。")),
    ),
    Family("closing.ja-thanks", T, (("host", "皆さん、ありがとうございました。"), ("who", "お疲れさまでした。"))),
    Family(
        "closing.ja-all-i-had",
        T,
        (("host", "私からは以上です。ありがとうございます。"), ("who", "ありがとうございます。")),
    ),
    Family("closing.ja-wrap", T, (("host", "ここで終わりにしましょう。"), ("who", "はい、またよろしくお願いします。"))),
    Family(
        "closing.ja-time-back",
        H,
        (("host", "予定より少し早いですが、終わりにします。"), ("who", "ありがとうございます。")),
    ),
    Family(
        "closing.ja-anything-else",
        H,
        (("host", "最後に何かありますか？"), ("who", "大丈夫です。"), ("host", "では、お疲れさまでした。")),
    ),
    Family("closing.ja-next-week", H, (("host", "では来週の同じ時間で。"), ("who", "また来週。"))),
    Family("closing.ja-notes", H, (("host", "議事録はあとで送ります。"), ("who", "ありがとうございます、{h}さん。"))),
)
