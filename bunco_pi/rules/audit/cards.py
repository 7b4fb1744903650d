"""The audit's score cards and travelers: each card added up from the rounds as the audit
played them, and compared with the record's."""

from __future__ import annotations

from typing import Any

from bunco_pi.rules.audit.scoring import TableReplay
from bunco_pi.rules.house import HouseRules

STATS = ("wins", "losses", "buncos", "baby_buncos", "wipeouts", "weighted_wins",
         "weighted_losses", "points")


class CardsCheck:
    """Part of the audit (mixed into it): its cards and traveler triggers."""

    rules: HouseRules
    record: dict[str, Any]
    cards: dict[str, dict[str, int]]
    travel: list[tuple[int, str]]
    wipeout_travel: list[tuple[int, str]]

    def say(self, problem: str) -> None:
        raise NotImplementedError

    def _add_cards(self, tables: list[TableReplay]) -> None:
        rules = self.rules
        for i, table in enumerate(tables):
            weight = rules.score_card.head_weight if rules.score_card.weighted_head and i == 0 \
                else 1
            # a ghost's seat scores for nobody, even the seat of someone who left with her card
            seated = {p: self.cards[p] for p in table.seats
                      if p in self.cards and p not in table.ghosts}
            # "no-result": nothing of the held round counts on its players' cards; the
            # travelers moved all the same, as the dice did
            cards = {} if table.held == "no-result" else seated
            if table.decided:
                for p in table.winners:
                    if p in cards:
                        cards[p]["wins"] += 1
                        cards[p]["weighted_wins"] += weight
                for p in table.losers:
                    if p in cards:
                        cards[p]["losses"] += 1
                        cards[p]["weighted_losses"] += weight
            for roll in table.rolls:
                if not roll.rolloff and roll.player in cards:
                    cards[roll.player]["points"] += roll.points
                who = table.credited(roll)
                if roll.worth.bunco and who in cards:
                    cards[who]["buncos"] += 1
                if roll.player in cards:
                    cards[roll.player]["baby_buncos"] += roll.worth.baby
                    cards[roll.player]["wipeouts"] += roll.worth.wipeout
                if roll.worth.travels and who is not None:
                    self.travel.append((roll.at, who))
                if roll.worth.wipeout and rules.wipeout.traveler and roll.player in seated:
                    self.wipeout_travel.append((roll.at, roll.player))
            if table.ended_round and rules.score_card.called_bunko_counts:
                caller = table.called_bunko()
                if caller in cards:
                    cards[caller]["buncos"] += 1

    def _compare_cards(self) -> None:
        got = self.record["cards"]
        for pid in got:
            if pid not in self.cards:
                self.say(f"card for {pid}, who is a ghost or unknown")
        missing = [p for p in self.cards if p not in got]
        if missing:
            self.say(f"no card for {', '.join(missing)}")
        for pid, card in self.cards.items():
            if pid not in got:
                continue
            for stat in STATS:
                if got[pid].get(stat) != card[stat]:
                    self.say(f"{pid}: card says {stat} {got[pid].get(stat)}, rolls say "
                             f"{card[stat]}")

    def _compare_traveler(self, key: str, triggers: list[tuple[int, str]]) -> None:
        holder = max(triggers)[1] if triggers else None
        name = key.replace("_", " ")
        if self.record.get(key) != holder:
            if holder is None:
                self.say(f"{name} is {self.record.get(key)}, but nobody triggered it")
            else:
                self.say(f"{name} is {self.record.get(key)}, the last trigger was by {holder}")
