"""The judge providers, one row each: what the config calls it, what reports record, how it judges.

``judge.provider`` in ``ragaliq.yaml`` names a row of :data:`PROVIDERS`; the report (and so the
baseline) records the row's ``recorded_as``, which for Claude on Anthropic's API is
``anthropic``, not ``claude``: both names stay as they are for the files already written, and this
table maps one to the other. A row says where the provider reaches Claude (its
:class:`~ragaliq.judges.platforms.Route`, with the platform's batches, endpoint and credentials),
or that it judges offline, and whether the offline judge settles what it is sure of first (the
cascade). Building a judge and describing one (:mod:`ragaliq.judges.factory`) both read it.

``auto`` is no row: it is Claude on Anthropic's API when an API key is at hand, and the offline
judge otherwise.

Nothing here loads the Anthropic SDK or a judge: the trust module maps a baseline's recorded
provider back to a config's with :data:`PROVIDER_OF_RECORD`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from ragaliq.config import JudgeConfig
from ragaliq.judges.platforms import ANTHROPIC, BEDROCK, VERTEX, Route, api_key_from

__all__ = [
    "AUTO",
    "CLAUDE",
    "OFFLINE",
    "PROVIDERS",
    "PROVIDER_OF_RECORD",
    "Provider",
    "provider_for",
]

AUTO = "auto"
"""The default ``judge.provider``: Claude when an API key is at hand, else the offline judge."""


@dataclass(frozen=True, kw_only=True)
class Provider:
    """One value of ``judge.provider``, and how a judge of it is built."""

    name: str
    """Its name in ``ragaliq.yaml``."""
    recorded_as: str
    """The judge's provider in reports and baselines."""
    route: Route | None
    """Where it reaches Claude; None for the offline judge alone."""
    offline_first: bool = False
    """The offline judge settles the claims it is sure of, Claude judges the rest (cascade)."""

    @property
    def batches(self) -> bool:
        """Whether it can send Message Batches (``judge.batch``)."""
        return self.route is not None and self.route.batches

    @property
    def platform(self) -> str | None:
        """The platform it reaches Claude on, by the name reports record; None offline."""
        return self.route.name if self.route is not None else None


OFFLINE = Provider(name="offline", recorded_as="offline", route=None)
"""The offline judge alone; what ``auto`` judges with when no API key is at hand."""
CLAUDE = Provider(name="claude", recorded_as=ANTHROPIC.name, route=ANTHROPIC)
"""Claude on Anthropic's API; what ``auto`` judges with when an API key is at hand."""

PROVIDERS: Mapping[str, Provider] = {
    p.name: p
    for p in (
        OFFLINE,
        CLAUDE,
        Provider(name="bedrock", recorded_as=BEDROCK.name, route=BEDROCK),
        Provider(name="vertex", recorded_as=VERTEX.name, route=VERTEX),
        Provider(name="cascade", recorded_as="cascade", route=ANTHROPIC, offline_first=True),
    )
}
"""Every provider but ``auto``, by its name in ``ragaliq.yaml``."""

PROVIDER_OF_RECORD: Mapping[str, str] = {p.recorded_as: p.name for p in PROVIDERS.values()}
"""``judge.provider`` for each provider name a report records (``anthropic`` is ``claude``)."""


def provider_for(config: JudgeConfig, env: Mapping[str, str]) -> Provider:
    """The provider that judges with ``config``: ``auto`` resolved by whether a key is at hand."""
    if config.provider != AUTO:
        return PROVIDERS[config.provider]
    return CLAUDE if api_key_from(config, env) is not None else OFFLINE
