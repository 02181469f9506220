"""Hot words and prompt cut to fit a decoder's prompt budget, counted in its own tokens.

Whisper puts both after ``<|startofprev|>``, which it limits to :data:`MAX_PROMPT_TOKENS`
tokens: :func:`fit_biasing` keeps the hot words in their given (priority) order while they
fit, gives the prompt the rest (its last words) and logs what it dropped.
"""
from __future__ import annotations

import logging
from collections.abc import Callable

from speechkit.stages.asr.biasing import Biasing

log = logging.getLogger(__name__)

#: Whisper's limit on the tokens after <|startofprev|> (n_text_ctx // 2 - 1).
MAX_PROMPT_TOKENS = 223


def fit_biasing(biasing: Biasing | None, budget: int,
                count_tokens: Callable[[str], int]) -> tuple[str | None, str | None]:
    """(prompt, hotwords) cut to fit ``budget`` tokens together, as ``count_tokens`` counts them.

    Hot words keep their order (first = most important) and are dropped from the end, joined
    with ``", "``; the prompt then keeps as many of its last words as the remaining budget allows.
    """
    if not biasing:
        return None, None
    kept: list[str] = []
    terms = [t.strip() for t in biasing.hotwords if t.strip()]
    for i, term in enumerate(terms):
        if count_tokens(", ".join(kept + [term])) > budget:
            log.warning("hot words over the %d-token prompt budget; dropped %d: %s",
                        budget, len(terms) - i, ", ".join(terms[i:]))
            break
        kept.append(term)
    hotwords = ", ".join(kept) or None
    budget -= count_tokens(hotwords) if hotwords else 0
    words = (biasing.prompt or "").split()
    lo, hi = 0, len(words)  # smallest start index whose tail fits the budget
    while lo < hi:
        mid = (lo + hi) // 2
        if count_tokens(" ".join(words[mid:])) <= budget:
            hi = mid
        else:
            lo = mid + 1
    if lo:
        # by design (the prompt gets what the hot words leave, its last words first): not a warning
        log.info("prompt over the remaining %d-token budget; dropped its first %d of %d words",
                 budget, lo, len(words))
    prompt = " ".join(words[lo:]) or None
    return prompt, hotwords
