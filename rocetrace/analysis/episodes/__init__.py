"""Retransmission episodes: what triggered each and how the NIC resent, with the evidence and
how certain the capture makes each answer (docs/analysis.md gives every rule).

The state machine (connection.py) found the episodes and the protocol facts around each:
the NAK it answers, what had been sent and acknowledged, the shape of the resent PSNs. Here
those facts are weighed with the capture's own clock (tolerances.py) and its PFC pauses.
Each answer is `certain` (the capture excludes every alternative), `likely` (an
alternative needs something the capture shows no sign of, or the answer comes from the
same NIC's certain episodes: the recovery policy is a NIC setting) or `uncertain`.

One module per concern, each building only on those above it:

- `basics`: the context every rule reads and the facts several rules look up.
- `runs`: runs of resends, and the splits a NAK of a run's first PSN makes.
- `shapes`: the shapes of resent PSNs that tell a NIC's recovery apart.
- `rnr`: RNR NAKs' retries, on time or not.
- `timers`: timing against the ACK timer; runs held by pauses the capture misses.
- `slow_answers`: a resend slower than the path's answers that still answers its NAK.
- `nak_claims`: which NAK each episode answers.
- `triggers`: each episode's trigger and its certainty.
- `go_back_0`: go-back-0 against go-back-N below a NAK or an ACK.
- `modes`: each episode's recovery mode and its certainty.
- `answered_naks`: every NAK an episode may answer (its `nak_frames`).
- `late_copies`: the late first copies an episode leaves open (its `late_frames`).
- `weighing`: the rules weighed, in order, into the episode table, one row per episode.
"""

from rocetrace.analysis.episodes.basics import (
    CERTAIN,
    CERTAINTIES,
    EPISODE_COLUMNS,
    LIKELY,
    MODES,
    TRIGGERS,
    UNCERTAIN,
    Context,
)
from rocetrace.analysis.episodes.nak_claims import reserved_naks
from rocetrace.analysis.episodes.timers import narrowed, timer_margin
from rocetrace.analysis.episodes.weighing import (
    ack_timeout_estimate,
    empty_episodes,
    episode_table,
    seen_context,
)

__all__ = [
    "CERTAIN",
    "CERTAINTIES",
    "EPISODE_COLUMNS",
    "LIKELY",
    "MODES",
    "TRIGGERS",
    "UNCERTAIN",
    "Context",
    "ack_timeout_estimate",
    "empty_episodes",
    "episode_table",
    "narrowed",
    "reserved_naks",
    "seen_context",
    "timer_margin",
]
