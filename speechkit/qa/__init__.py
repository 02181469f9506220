"""Questions a meeting's record must answer: the gold questions (:mod:`~speechkit.qa.questions`),
what a run produced for a meeting (:mod:`~speechkit.qa.output`), the backends that answer from it
(:mod:`~speechkit.qa.extractive`, :mod:`~speechkit.qa.llm`), the ``qa`` step over a run
(:mod:`~speechkit.qa.run`) and its ``qa.json`` (:mod:`~speechkit.qa.answers`). The scores are in
:mod:`speechkit.metrics.qa`; docs/qa.md says what each means.
"""
