"""What judge calls cost: list prices per model family, overridable in the config."""

from __future__ import annotations

from collections.abc import Mapping

from ragaliq.config import ModelPrice
from ragaliq.models import Usage

__all__ = ["BATCH_DISCOUNT", "FAMILY_PRICES", "batch_price", "cost_usd", "price_for"]

FAMILY_PRICES: dict[str, ModelPrice] = {
    "opus": ModelPrice(input=5.0, output=25.0),
    "sonnet": ModelPrice(input=3.0, output=15.0),
    "haiku": ModelPrice(input=1.0, output=5.0),
}
"""USD per million tokens by model family; set ``judge.pricing`` for exact or negotiated prices."""
_FALLBACK = FAMILY_PRICES["sonnet"]
BATCH_DISCOUNT = 0.5
"""The Message Batches API's price, as a share of the interactive price of every token."""


def price_for(model: str, overrides: Mapping[str, ModelPrice]) -> ModelPrice:
    """The price of ``model``: the config's entry, else its family's list price."""
    if model in overrides:
        return overrides[model]
    for family, price in FAMILY_PRICES.items():
        if family in model:
            return price
    return _FALLBACK


def batch_price(price: ModelPrice) -> ModelPrice:
    """``price`` through the Message Batches API: every token at half price, cache included."""
    cache_read, cache_write = _cache_prices(price)
    return ModelPrice(
        input=price.input * BATCH_DISCOUNT,
        output=price.output * BATCH_DISCOUNT,
        cache_read=cache_read * BATCH_DISCOUNT,
        cache_write=cache_write * BATCH_DISCOUNT,
    )


def cost_usd(usage: Usage, price: ModelPrice) -> float:
    """The cost of the tokens in ``usage``; cache reads at 0.1x and writes at 1.25x by default."""
    cache_read, cache_write = _cache_prices(price)
    total = (
        usage.input_tokens * price.input
        + usage.output_tokens * price.output
        + usage.cache_read_tokens * cache_read
        + usage.cache_write_tokens * cache_write
    )
    return round(total / 1_000_000, 8)


def _cache_prices(price: ModelPrice) -> tuple[float, float]:
    """Cache reads and writes: as set, else a tenth and 1.25 times the input price."""
    cache_read = price.cache_read if price.cache_read is not None else price.input * 0.1
    cache_write = price.cache_write if price.cache_write is not None else price.input * 1.25
    return cache_read, cache_write
