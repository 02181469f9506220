"""Japanese: pools, numbers and dates in words, readings.

The TTS is told kana: pykakasi cuts a run of kanji and kana into words and gives each its
reading (the particles は and へ said わ and え), one verbatim word each; espeak-ng's ``ja``
voice says them with a word event each, and a word's characters share its time evenly in the
reference. Numbers are said as people say them, with their sound changes (2,500 -> 二千五百
にせんごひゃく, 300 -> 三百 さんびゃく, 3月8日 -> さんがつようか, 20日 -> はつか), a ticket digit by
digit, and written canonically in the references.
"""

from __future__ import annotations

import datetime as dt
import re
from functools import cache

from speechkit.synth.cjk_language import CJKLanguage, mixed_projects, project, term_of
from speechkit.synth.language import Pools
from speechkit.synth.state import Term

_KANJI = "〇一二三四五六七八九"
_KANA = ("ぜろ", "いち", "に", "さん", "よん", "ご", "ろく", "なな", "はち", "きゅう")
_HUNDREDS = {1: "ひゃく", 3: "さんびゃく", 6: "ろっぴゃく", 8: "はっぴゃく"}
_THOUSANDS = {1: "せん", 3: "さんぜん", 8: "はっせん"}
_MONTHS = (
    "",
    "いちがつ",
    "にがつ",
    "さんがつ",
    "しがつ",
    "ごがつ",
    "ろくがつ",
    "しちがつ",
    "はちがつ",
    "くがつ",
    "じゅうがつ",
    "じゅういちがつ",
    "じゅうにがつ",
)
_DAYS = {
    1: "ついたち",
    2: "ふつか",
    3: "みっか",
    4: "よっか",
    5: "いつか",
    6: "むいか",
    7: "なのか",
    8: "ようか",
    9: "ここのか",
    10: "とおか",
    14: "じゅうよっか",
    20: "はつか",
    24: "にじゅうよっか",
}
_PURE_KANA = re.compile(r"^[\u3040-\u309f]+$")


@cache
def _kakasi():
    import pykakasi

    return pykakasi.kakasi()


def kana(text: str) -> list[tuple[str, str]]:
    """``text`` (kanji and kana) as words with their readings in hiragana (pykakasi), the
    topic particle は said わ and the direction particle へ said え."""
    out = []
    for item in _kakasi().convert(text):
        word, reading = item["orig"], item["hira"]
        if word == "へ":
            reading = "え"
        elif word.endswith("は") and _PURE_KANA.match(word):  # は, では, それは: the particle
            reading = reading[:-1] + "わ"
        out.append((word, reading))
    return out


def _tens(n: int) -> tuple[str, str]:
    """1 <= n < 100 as one word."""
    tens, ones = divmod(n, 10)
    written = ("" if tens < 2 else _KANJI[tens]) + ("十" if tens else "") + (_KANJI[ones] if ones else "")
    said = ("" if tens < 2 else _KANA[tens]) + ("じゅう" if tens else "") + (_KANA[ones] if ones else "")
    return written, said


def _group(n: int) -> list[tuple[str, str]]:
    """1 <= n < 10000 as words: the thousands, the hundreds, the rest."""
    out = []
    thousands, hundreds, rest = n // 1000, n // 100 % 10, n % 100
    if thousands:
        out.append(
            (("" if thousands == 1 else _KANJI[thousands]) + "千", _THOUSANDS.get(thousands, _KANA[thousands] + "せん"))
        )
    if hundreds:
        out.append(
            (("" if hundreds == 1 else _KANJI[hundreds]) + "百", _HUNDREDS.get(hundreds, _KANA[hundreds] + "ひゃく"))
        )
    if rest:
        out.append(_tens(rest))
    return out


def number_words(n: int) -> list[tuple[str, str]]:
    """A cardinal as words ``(kanji, kana)``, 0 <= n < 10**8 (2500 -> 二千 にせん, 五百 ごひゃく)."""
    if not 0 <= n < 10**8:
        raise ValueError(f"number out of range: {n}")
    if n == 0:
        return [("零", "れい")]
    high, low = divmod(n, 10000)
    out = []
    if high:
        words = _group(high)
        out.append(("".join(w for w, _ in words) + "万", "".join(s for _, s in words) + "まん"))
        if high == 1:
            out[-1] = ("一万", "いちまん")
    return out + (_group(low) if low else [])


def date_words(day: dt.date) -> list[tuple[str, str]]:
    """A date as said: the month and the day, with the irregular day readings (8日 ようか)."""
    written_day = "".join(w for w, _ in number_words(day.day)) + "日"
    said_day = _DAYS.get(day.day)
    if said_day is None:
        tens, ones = divmod(day.day, 10)
        ones_said = {7: "しち", 9: "く"}.get(ones, _KANA[ones] if ones else "")
        said_day = ("" if tens < 2 else _KANA[tens]) + ("じゅう" if tens else "") + ones_said + "にち"
    return [("".join(w for w, _ in number_words(day.month)) + "月", _MONTHS[day.month]), (written_day, said_day)]


def _term(canonical: str) -> tuple[str, str, str]:
    words = kana(canonical)
    return canonical, " ".join(w for w, _ in words), " ".join(s for _, s in words)


PROJECTS = (
    project(
        _term,
        "清算ハブ",
        "ISO移行",
        ("照合ルール", "電文フォーマット", "口座振替", "仕向送金", "資金繰り表", "与信枠", "夜間バッチ", "取引明細"),
        (
            ("切り替え日", "date", ""),
            ("テスト件数", "count", "件"),
            ("エラー率", "percent", ""),
            ("未対応チケット", "ticket", ""),
        ),
        (
            "{j}の残りの項目のマッピング",
            "{j}の検証ルールの作成",
            "{j}のサンプルの銀行との確認",
            "{j}のテストデータの更新",
        ),
        (
            "{j}のマッピングはほぼ終わりました",
            "まだ{j}で止まっています",
            "{j}の仕様がまた変わりました",
            "{j}は検証を通るようになりました",
        ),
        (
            ("{j}の扱い", ("変換レイヤー方式", "一括切り替え")),
            ("{j}の展開方法", ("段階的な展開", "週末の一斉切り替え")),
        ),
    ),
    project(
        _term,
        "北斗",
        "障害対策",
        (
            "フェイルオーバー",
            "サーキットブレーカー",
            "流量制御",
            "メッセージキュー",
            "カナリアリリース",
            "分散トレーシング",
            "負荷試験",
            "監視ダッシュボード",
        ),
        (
            ("レイテンシ予算", "ms", "ミリ秒"),
            ("切り替え時間", "seconds", "秒"),
            ("エラー率", "percent", ""),
            ("リリース日", "date", ""),
        ),
        ("{j}の設計書の作成", "{j}の負荷テストの追加", "{j}のアラートの修正", "障害時の{j}の計測"),
        (
            "修正後、{j}はかなり良くなりました",
            "{j}でまたスパイクが出ました",
            "{j}の変更はレビュー中です",
            "{j}はステージングでまだ不安定です",
        ),
        (
            ("{j}のロック方式", ("グローバルロック", "ロックなしの方式")),
            ("{j}のリリース時期", ("次のスプリント", "負荷試験の後")),
        ),
    ),
    project(
        _term,
        "桜",
        "大口顧客の契約",
        (
            "秘密保持契約",
            "シングルサインオン",
            "提案依頼書",
            "基本契約",
            "検証環境",
            "セキュリティ審査",
            "見積書",
            "データ処理契約",
        ),
        (
            ("契約金額", "money", ""),
            ("ライセンス数", "count", "席"),
            ("契約日", "date", ""),
            ("値引き率", "percent", ""),
        ),
        ("{j}の資料の送付", "試験導入向けの{j}の設定", "{j}の修正案の確認", "{j}の説明会の調整"),
        (
            "法務がまだ{j}を見ています",
            "先方が{j}を承認しました",
            "また{j}について質問がありました",
            "{j}の質問にはすべて回答しました",
        ),
        (("{j}の価格設定", ("定額制", "席数課金")), ("{j}の担当", ("営業チーム", "基盤チーム"))),
    ),
    project(
        _term,
        "レイク基盤",
        "データ基盤",
        (
            "データリネージ",
            "ジョブスケジューラ",
            "差分同期",
            "パーティション",
            "データ品質",
            "集計テーブル",
            "指標定義",
            "ストレージ階層",
        ),
        (
            ("夜間の処理件数", "count", "行"),
            ("ストレージ費用", "money", ""),
            ("再処理の日付", "date", ""),
            ("リトライ回数", "count", "回"),
        ),
        ("{j}関連ジョブの移行", "{j}のドキュメント整備", "{j}へのテスト追加", "{j}のチューニング"),
        ("{j}の移行は半分終わりました", "昨夜{j}が二回失敗しました", "{j}の再処理が完了しました", "{j}の権限待ちです"),
        (("{j}の保存形式", ("列指向フォーマット", "通常のファイル")), ("{j}の実行頻度", ("一時間ごと", "一日一回"))),
    ),
    project(
        _term,
        "灯台",
        "モバイルリリース",
        (
            "ホットフィックス",
            "ベータ版",
            "プッシュ通知",
            "起動時間",
            "ストア審査",
            "計測タグ",
            "クラッシュ監視",
            "アプリ内課金",
        ),
        (
            ("クラッシュフリー率", "percent", ""),
            ("リリース日", "date", ""),
            ("ベータテスター数", "count", "人"),
            ("アプリサイズ", "megabytes", "メガ"),
        ),
        ("{j}の不具合修正", "{j}の連携の更新", "{j}のスモークテスト", "{j}のリリースノート作成"),
        (
            "今週の{j}の数字は問題ありません",
            "{j}でリジェクトされました",
            "{j}の報告が増えています",
            "{j}のアップデートはもうマージしました",
        ),
        (
            ("{j}の公開方法", ("段階的な公開", "全員への一斉公開")),
            ("{j}のサポート", ("打ち切り", "もう一リリース継続")),
        ),
    ),
)

#: Projects of a mixed workspace: Japanese phrases around English jargon and tickers.
MIXED_PROJECTS = mixed_projects(
    ("四半期決算", "香港上場", "金利ヘッジ"),
    (
        (
            ("売上見通し", "money", ""),
            ("自社株買いの規模", "count", "株"),
            ("粗利率", "percent", ""),
            ("決算発表日", "date", ""),
        ),
        (
            ("調達額", "money", ""),
            ("応募者数", "count", "人"),
            ("上場日", "date", ""),
            ("ディスカウント率", "percent", ""),
        ),
        (
            ("ヘッジ比率", "percent", ""),
            ("想定元本", "money", ""),
            ("満期日", "date", ""),
            ("リスク限度額", "money", ""),
        ),
    ),
    (
        ("{j}のモデル更新", "{j}のデータ整理", "{j}の顧客への確認", "{j}のレポート作成"),
        ("{j}の資料準備", "{j}の弁護士との確認", "{j}の日程調整", "{j}の条項チェック"),
        (
            "{j}のエクスポージャーの再計算",
            "{j}のパラメータの見直し",
            "{j}のリスクレポート作成",
            "{j}のモニタリング",
        ),
    ),
    (
        (
            "{j}は予想より少し良かったです",
            "{j}はまだ出ていません",
            "{j}への市場の反応はいまいちです",
            "{j}の数字は確認済みです",
        ),
        (
            "{j}の書類はほぼそろいました",
            "{j}は当局の回答待ちです",
            "投資家から{j}について質問が来ています",
            "{j}は確定しました",
        ),
        (
            "{j}の変動が少し大きいです",
            "{j}はまだ想定の範囲内です",
            "{j}のモデルは再調整が必要です",
            "{j}はすでに調整しました",
        ),
    ),
    (
        (("{j}の投資判断", ("保有継続", "一部売却")), ("{j}のレポートの単位", ("四半期ごと", "年次"))),
        (("{j}の価格帯", ("保守的な設定", "強気の設定")), ("{j}のスケジュール", ("来月", "次の四半期"))),
        (("{j}のヘッジ手段", ("金利スワップ", "先物")), ("{j}の損切りライン", ("引き締め", "据え置き"))),
    ),
)

POOLS = Pools(
    orgs=("東都証券", "みなと銀行", "光和アセット", "三つ葉ペイメント", "青葉データ", "大和保険"),
    first_names=tuple(
        (g, None)
        for g in (
            "健",
            "美咲",
            "翔太",
            "陽子",
            "大輔",
            "彩",
            "拓也",
            "直子",
            "誠",
            "恵",
            "亮",
            "由美",
            "浩二",
            "真理",
            "隆",
            "千尋",
            "悠人",
            "花子",
            "大樹",
            "美穂",
        )
    ),
    surnames=(
        "佐藤",
        "鈴木",
        "高橋",
        "田中",
        "伊藤",
        "渡辺",
        "山本",
        "中村",
        "小林",
        "加藤",
        "吉田",
        "山田",
        "山口",
        "松本",
        "井上",
        "木村",
    ),
    roles=(
        "開発マネージャー",
        "シニアエンジニア",
        "プロダクトマネージャー",
        "インフラエンジニア",
        "コンプライアンス責任者",
        "セールスエンジニア",
        "データエンジニア",
        "品質保証リード",
        "ソリューションアーキテクト",
        "財務アナリスト",
    ),
    backchannels=("はい", "うん", "なるほど", "ええ", "そうですね", "了解です", "たしかに", "はいはい"),
    weekdays=("月曜日", "火曜日", "水曜日", "木曜日", "金曜日"),
    projects=PROJECTS,
    # Enrollment passages: plain sentences about nothing any meeting says.
    enrollment_sentences=(
        "小さな船が静かな湖をゆっくり進んでいきます。",
        "窓の外で木の葉が風に揺れています。",
        "祖母は台所で餃子を作っています。",
        "この細い道は山の上のお寺へ続いています。",
        "雨上がりの空気はとても澄んでいます。",
        "彼は古い本を本棚にきれいに戻しました。",
        "子どもたちが校庭で凧をあげています。",
        "白い猫がベランダで日なたぼっこをしています。",
        "夜空には星がたくさん光っています。",
        "彼女は毎朝川沿いを走っています。",
        "机の上に温かいうどんが置いてあります。",
        "秋の田んぼは一面金色です。",
        "おじいさんが縁側で将棋を指しています。",
        "春になると庭にたくさんの花が咲きます。",
        "列車が長いトンネルを抜けていきます。",
        "海辺の砂はとても柔らかいです。",
    ),
)

#: Japanese gold-notes sentences (:mod:`speechkit.synth.notes`).
NOTES = {
    "head": "{title}（参加者：{attendees}）。",
    "item": "{name}さんが{due}までに{description}を担当する。",
    "closed": "{name}さんは{description}を完了した。",
    "decision": "{question}は{choice}に決定。",
    "number": "{project}：{topic}は{value}{unit}。",
    "unit": "{unit}",
}
#: Japanese gold questions (:mod:`speechkit.synth.questions`).
QUESTIONS = {
    "task": "「{description}」",
    "who_owns": "{task}の担当者は誰ですか？",
    "due": "{task}の期限はいつですか？",
    "who_asked": "{task}を依頼したのは誰ですか？",
    "decision": "{question}について何が決まりましたか？",
    "number": "{project}の{topic}はいくつですか？",
    "answer": "{value}{unit}",
}


class Japanese(CJKLanguage):
    """Japanese (``ja``), or with ``mixed`` Japanese turns with English jargon and numbers."""

    base = "ja"
    #: A verbatim word is a pykakasi word (about two characters): espeak-ng's Japanese voices at rate
    #: 0.9, with the pauses of the timeline, speak about 100 a minute (measured on seed 3, two meetings).
    words_per_minute = 100
    fillers = ("えーと", "あの")
    repair_markers = ("いや", "というか", "じゃなくて", "えっと")
    base_pools = POOLS
    mixed_projects = MIXED_PROJECTS
    notes = NOTES
    questions = QUESTIONS

    def readings(self, run: str) -> list[tuple[str, str]]:
        return kana(run)

    def full_name(self, given: str, surname: str) -> str:
        return f"{surname} {given}"

    def meeting_title(self, kind: str, project: str, names: list[str]) -> str:
        return {"standup": "チーム朝会", "review": f"{project}レビュー", "1:1": f"{names[0]}・{names[1]} 1on1"}[kind]

    def native_number(self, measure: str, value: int | dt.date, topic: str, unit: str) -> Term:
        if measure == "date":
            return term_of(date_words(value), f"{value.month}月{value.day}日", measure, topic, "")
        n = int(value)
        if measure == "percent":
            words = number_words(n // 10) + [
                ("点", "てん"),
                (_KANJI[n % 10], _KANA[n % 10]),
                ("パーセント", "ぱーせんと"),
            ]
            return term_of(words, f"{n // 10}.{n % 10}%", measure, topic, "")
        if measure == "ticket":
            return term_of([(_KANJI[int(c)], _KANA[int(c)]) for c in str(n)], str(n), measure, topic, "")
        if measure == "money":
            return term_of(number_words(n) + [("円", "えん")], f"{n:,}円", measure, topic, "")
        return term_of(number_words(n), f"{n:,}" if measure == "count" else str(n), measure, topic, unit)
