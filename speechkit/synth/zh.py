"""Chinese (Mandarin, simplified characters): pools, numbers and dates in words, readings.

The TTS is told pinyin with tone digits (pypinyin, tone sandhi of 一 and 不, the neutral tone
as 5), one syllable per character, so espeak-ng's ``cmn-latn-pinyin`` voice times every
character. Numbers are said as people say them (2,500 -> 两千五百, 45,000元 -> 四万五千元,
3.5% -> 百分之三点五, 3月8日 -> 三月八日, a ticket digit by digit) and written canonically in
the references, as English terms are.
"""

from __future__ import annotations

import datetime as dt

from speechkit.synth.cjk_language import CJKLanguage, mixed_projects, project, term_of
from speechkit.synth.language import Pools
from speechkit.synth.spoken import Piece
from speechkit.synth.state import Term

_DIGITS = "零一二三四五六七八九"


def pinyin(text: str) -> list[str]:
    """The pinyin of each character of ``text`` (a run of CJK characters), tone digits, 5 for neutral."""
    from pypinyin import Style, lazy_pinyin

    return lazy_pinyin(text, style=Style.TONE3, neutral_tone_with_five=True, tone_sandhi=True)


def _below_10000(n: int, leading: bool) -> str:
    parts, zero = [], False
    for size, name in ((1000, "千"), (100, "百"), (10, "十"), (1, "")):
        d = n // size % 10
        if d == 0:
            zero = bool(parts)
            continue
        if zero:
            parts.append("零")
            zero = False
        digit = "两" if d == 2 and size >= 100 else _DIGITS[d]
        if size == 10 and d == 1 and not parts and leading:
            digit = ""  # 十五, not 一十五
        parts.append(digit + name)
    return "".join(parts)


def number_words(n: int) -> str:
    """A cardinal in Chinese numerals as said aloud, 0 <= n < 10**8 (2500 -> 两千五百, 45000 -> 四万五千)."""
    if not 0 <= n < 10**8:
        raise ValueError(f"number out of range: {n}")
    if n < 10:
        return _DIGITS[n]
    if n < 10000:
        return _below_10000(n, leading=True)
    high, low = divmod(n, 10000)
    words = _below_10000(high, leading=True) + "万"
    if low:
        words += ("零" if low < 1000 else "") + _below_10000(low, leading=False)
    return words


def date_words(day: dt.date) -> str:
    """A date as said (三月八日)."""
    return f"{number_words(day.month)}月{number_words(day.day)}日"


def _term(canonical: str) -> tuple[str, str, str]:
    """A Chinese jargon entry ``(canonical, verbatim characters, pinyin)`` of its written form."""
    return canonical, " ".join(canonical), " ".join(pinyin(canonical))


PROJECTS = (
    project(
        _term,
        "清算通",
        "跨境清算改造",
        ("对账单", "清算报文", "头寸管理", "反洗钱筛查", "额度控制", "日终批处理", "备付金", "汇率牌价"),
        (("割接日期", "date", ""), ("测试批量", "count", "条"), ("拒付率", "percent", ""), ("未结工单", "ticket", "")),
        ("梳理{j}的字段映射", "补齐{j}的校验规则", "跟银行核对{j}的样例", "更新{j}的测试用例"),
        ("{j}的映射基本完成了", "我们还卡在{j}上", "{j}的接口又改了", "{j}已经通过校验了"),
        (("{j}的处理方式", ("加一个转换层", "一次性切换")), ("{j}的上线方式", ("分批上线", "周末一次切换"))),
    ),
    project(
        _term,
        "天枢",
        "容灾切换",
        ("主备切换", "熔断", "限流", "幂等键", "消息队列", "灰度发布", "链路追踪", "压力测试"),
        (
            ("延迟预算", "ms", "毫秒"),
            ("切换窗口", "seconds", "秒"),
            ("错误率", "percent", ""),
            ("发布日期", "date", ""),
        ),
        ("写一份{j}的设计文档", "给{j}加一个压测", "修好{j}的告警", "在切换场景下测一下{j}"),
        ("修完以后{j}好多了", "{j}又出现了一次尖峰", "{j}的改动在评审中", "{j}在预发环境还是不稳定"),
        (("{j}的加锁方案", ("全局锁", "无锁方案")), ("{j}什么时候上线", ("下个迭代", "压测之后"))),
    ),
    project(
        _term,
        "星河",
        "企业客户签约",
        ("尽职调查", "数据处理协议", "单点登录", "招标书", "框架协议", "沙箱环境", "等保测评", "报价单"),
        (("合同金额", "money", ""), ("席位数", "count", "个"), ("签约日期", "date", ""), ("折扣", "percent", "")),
        ("把{j}的材料发给客户", "给他们的试点配好{j}", "审一下{j}的修改意见", "约一次{j}的演示"),
        ("法务还在看{j}", "客户已经确认了{j}", "他们又问了{j}的问题", "{j}的问题都回复了"),
        (("{j}的定价方式", ("按年收费", "按席位收费")), ("{j}由谁负责", ("销售团队", "平台团队"))),
    ),
    project(
        _term,
        "湖仓",
        "数据平台",
        ("数据血缘", "调度任务", "增量同步", "分区表", "数据质量", "宽表", "指标口径", "冷热分层"),
        (
            ("每晚的数据量", "count", "行"),
            ("存储成本", "money", ""),
            ("回刷日期", "date", ""),
            ("数据新鲜度", "minutes", "分钟"),
        ),
        ("迁移{j}相关的任务", "补全{j}的文档", "给{j}加上测试", "优化{j}的性能"),
        ("{j}的迁移做了一半", "{j}昨晚失败了两次", "{j}的回刷跑完了", "我们在等{j}的权限"),
        (("{j}的存储格式", ("列式存储", "普通文件")), ("{j}的调度频率", ("每小时一次", "每天一次"))),
    ),
    project(
        _term,
        "灯塔",
        "移动端发版",
        ("热更新", "灰度包", "推送通道", "启动耗时", "应用商店审核", "埋点", "安装包", "卡顿监控"),
        (
            ("无崩溃率", "percent", ""),
            ("发版日期", "date", ""),
            ("内测人数", "count", "人"),
            ("安装包大小", "megabytes", "兆"),
        ),
        ("修复{j}的问题", "升级{j}的集成", "跑一遍{j}的冒烟测试", "写{j}的发版说明"),
        ("这周{j}的数据还行", "{j}被打回来了", "{j}的反馈越来越多", "{j}的升级已经合进去了"),
        (("{j}的发布方式", ("分阶段发布", "全量发布")), ("{j}还要不要支持", ("不再支持", "再支持一个版本"))),
    ),
)

#: Projects of a mixed workspace: Chinese phrases around English jargon and tickers.
MIXED_PROJECTS = mixed_projects(
    ("季度业绩", "港股上市", "利率对冲"),
    (
        (
            ("营收预期", "money", ""),
            ("回购规模", "count", "股"),
            ("毛利率", "percent", ""),
            ("业绩发布日", "date", ""),
        ),
        (
            ("募资规模", "money", ""),
            ("认购人数", "count", "人"),
            ("上市日期", "date", ""),
            ("发行折扣", "percent", ""),
        ),
        (("对冲比例", "percent", ""), ("名义本金", "money", ""), ("到期日", "date", ""), ("风险限额", "money", "")),
    ),
    (
        ("更新{j}的模型", "整理{j}的数据", "跟客户确认{j}", "写一份{j}的点评"),
        ("准备{j}的材料", "跟律师过一遍{j}", "排一下{j}的时间", "核对{j}的条款"),
        ("重算{j}的敞口", "复核{j}的参数", "写{j}的风控报告", "监控{j}的变化"),
    ),
    (
        ("{j}比预期好一些", "{j}还没出来", "市场对{j}反应一般", "{j}的数据已经核对过了"),
        ("{j}的文件基本齐了", "{j}还在等监管反馈", "投资人在问{j}", "{j}已经定下来了"),
        ("{j}的波动有点大", "{j}还在正常范围内", "{j}的模型要重新校准", "{j}已经调整过了"),
    ),
    (
        (("{j}的覆盖策略", ("继续持有", "减仓")), ("{j}的报告口径", ("按季度", "按年度"))),
        (("{j}的定价区间", ("偏保守", "偏积极")), ("{j}的时间表", ("下个月", "推迟一个季度"))),
        (("{j}的对冲工具", ("利率互换", "期货")), ("{j}的止损线", ("收紧", "维持不变"))),
    ),
)

_GIVEN = (
    ("伟", "小{s}"),
    ("娜", None),
    ("敏", "小{s}"),
    ("静", None),
    ("磊", "老{s}"),
    ("婷", None),
    ("杰", "小{s}"),
    ("涛", None),
    ("志强", "老{s}"),
    ("晓燕", None),
    ("建华", None),
    ("雨欣", "小{s}"),
    ("子涵", None),
    ("浩然", None),
    ("思远", None),
    ("佳怡", "小{s}"),
    ("俊杰", None),
    ("文博", None),
    ("欣怡", None),
    ("明轩", None),
)
POOLS = Pools(
    orgs=("华信证券", "远景支付", "恒泰基金", "新联银行", "博远科技", "瑞丰保险"),
    first_names=_GIVEN,
    surnames=("王", "李", "张", "刘", "陈", "杨", "黄", "赵", "周", "吴", "徐", "孙", "马", "朱", "胡", "郭"),
    roles=(
        "研发经理",
        "高级工程师",
        "产品经理",
        "运维工程师",
        "合规负责人",
        "销售工程师",
        "数据工程师",
        "测试负责人",
        "解决方案架构师",
        "财务分析师",
    ),
    backchannels=("嗯", "对", "好的", "是的", "明白", "没问题", "对对", "嗯嗯"),
    weekdays=("周一", "周二", "周三", "周四", "周五"),
    projects=PROJECTS,
    # Enrollment passages: plain sentences about nothing any meeting says.
    enrollment_sentences=(
        "小船慢慢地划过平静的湖面。",
        "窗外的树叶被风吹得沙沙作响。",
        "奶奶在厨房里包饺子。",
        "这条小路通向山顶的寺庙。",
        "雨后的空气特别清新。",
        "他把旧书整齐地放回书架。",
        "孩子们在操场上放风筝。",
        "一只白猫躺在阳台上晒太阳。",
        "夜里的星星又多又亮。",
        "她每天早上在河边跑步。",
        "桌上放着一碗热腾腾的面条。",
        "秋天的稻田一片金黄。",
        "老人坐在门口的石凳上下棋。",
        "春天来了，花园里开满了花。",
        "火车穿过长长的隧道。",
        "海边的沙滩又软又细。",
        "爷爷喜欢在院子里种菜。",
        "图书馆里安静得能听见翻书的声音。",
    ),
)


#: Chinese gold-notes sentences (:mod:`speechkit.synth.notes`).
NOTES = {
    "head": "{title}，参会人：{attendees}。",
    "item": "{name}负责在{due}之前{description}。",
    "closed": "{name}已完成待办：{description}。",
    "decision": "关于{question}，决定：{choice}。",
    "number": "{project}：{topic}是{value}{unit}。",
    "unit": "{unit}",
}
#: Chinese gold questions (:mod:`speechkit.synth.questions`).
QUESTIONS = {
    "task": "“{description}”这项待办",
    "who_owns": "谁负责{task}？",
    "due": "{task}什么时候到期？",
    "who_asked": "{task}是谁提出的？",
    "decision": "关于{question}，最后决定了什么？",
    "number": "{project}的{topic}是多少？",
    "answer": "{value}{unit}",
}


class Chinese(CJKLanguage):
    """Mandarin Chinese (``zh``), or with ``mixed`` Chinese turns with English jargon and numbers."""

    base = "zh"
    #: A verbatim word is a character: espeak-ng's Mandarin voices at rate 0.9, with the pauses of the
    #: timeline, speak about 190 a minute (measured on seed 3, two meetings).
    words_per_minute = 190
    fillers = ("嗯", "那个")
    repair_markers = ("我是说", "不对", "就是", "或者说")
    base_pools = POOLS
    mixed_projects = MIXED_PROJECTS
    notes = NOTES
    questions = QUESTIONS

    def readings(self, run: str) -> list[tuple[str, str]]:
        return list(zip(run, pinyin(run)))

    def pause_before(self, previous: Piece) -> bool:
        """A filler comes at a phrase boundary (after punctuation or a term), not inside a word:
        a verbatim word is a character, and the text has no word boundaries."""
        return previous.term is not None or previous.say[-1][-1:] in ",.?!"

    def full_name(self, given: str, surname: str) -> str:
        return surname + given

    def nickname(self, nickname: str | None, surname: str) -> str | None:
        return None if nickname is None else nickname.replace("{s}", surname)

    def meeting_title(self, kind: str, project: str, names: list[str]) -> str:
        return {"standup": "团队站会", "review": f"{project}评审会", "1:1": f"{names[0]}/{names[1]}一对一"}[kind]

    def native_number(self, measure: str, value: int | dt.date, topic: str, unit: str) -> Term:
        if measure == "date":
            return term_of(self.readings(date_words(value)), f"{value.month}月{value.day}日", measure, topic, "")
        n = int(value)
        if measure == "percent":
            words = f"百分之{number_words(n // 10)}点{_DIGITS[n % 10]}"
            return term_of(self.readings(words), f"{n // 10}.{n % 10}%", measure, topic, "")
        if measure == "ticket":
            return term_of(self.readings("".join(_DIGITS[int(c)] for c in str(n))), str(n), measure, topic, "")
        if measure == "money":
            return term_of(self.readings(number_words(n) + "元"), f"{n:,}元", measure, topic, "")
        return term_of(self.readings(number_words(n)), f"{n:,}" if measure == "count" else str(n), measure, topic, unit)
