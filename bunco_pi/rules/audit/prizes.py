"""The audit's prizes: amounts shared out of the pot, who can win each, and the tie-break's
account naming the winner among exactly the tied players."""

from __future__ import annotations

import re
from typing import Any

from bunco_pi.rules.house import HouseRules


class PrizesCheck:
    """Part of the audit (mixed into it): the prizes of a complete night."""

    rules: HouseRules
    record: dict[str, Any]
    real: list[str]
    cards: dict[str, dict[str, int]]
    travel: list[tuple[int, str]]
    wipeout_travel: list[tuple[int, str]]

    def say(self, problem: str) -> None:
        raise NotImplementedError

    def _amounts(self) -> list[int]:
        """Each prize in cents; with scale_to_pot, cash prizes share out exactly the pot, by
        largest remainder (ties to the earlier prize)."""
        prizes = self.rules.prizes
        raw = [round(p.amount * 100) for p in prizes.prize]
        cash = [i for i, p in enumerate(prizes.prize) if p.cash]
        pot = round(prizes.pot_per_player * 100) * len(self.real)
        total = sum(raw[i] for i in cash)
        if not prizes.scale_to_pot or total in (0, pot):
            return raw
        out = list(raw)
        exact = {i: raw[i] * pot / total for i in cash}
        for i in cash:
            out[i] = int(exact[i])
        left = pot - sum(out[i] for i in cash)
        for i in sorted(cash, key=lambda i: (int(exact[i]) - exact[i], i))[:left]:
            out[i] += 1
        return out

    def _metric(self, award: str, card: dict[str, int]) -> int:
        weighted = self.rules.score_card.weighted_head
        return {
            "most-buncos": card["buncos"],
            "most-wins": card["weighted_wins" if weighted else "wins"],
            "most-losses": card["weighted_losses" if weighted else "losses"],
            "most-baby-buncos": card["baby_buncos"],
            "most-wipeouts": card["wipeouts"],
            "fifty-fifty": -abs(card["wins"] - card["losses"]),  # closest to equal
            "draw-without-prize": 0,
        }[award]

    def _check_prizes(self, log: list[Any]) -> None:
        rules, record = self.rules, self.record
        prizes = record["prizes"]
        if not any(isinstance(e, list) and e[:1] == ["prizes"] for e in log):
            self.say("the night is complete but its log never settles the prizes")
        if len(prizes) != len(rules.prizes.prize):
            self.say(f"{len(prizes)} prizes given, rules list {len(rules.prizes.prize)}")
            return
        amounts = self._amounts()
        holders = {"traveler": self._holder(self.travel),
                   "wipeout-traveler": self._holder(self.wipeout_travel)}
        one_each = rules.prizes.one_cash_prize_per_player
        cash_winners: set[str] = set()
        any_winners: set[str] = set()
        for rule, prize, cents in zip(rules.prizes.prize, prizes, amounts, strict=True):
            name = rule.name
            if prize.get("name") != name:
                self.say(f"prize '{prize.get('name')}' is where the rules list '{name}'")
            if round(prize["amount"] * 100) != cents:
                self.say(f"prize '{name}' pays {prize['amount']:.2f}, the rules give "
                         f"{cents / 100:.2f}")
            if bool(prize.get("cash")) != rule.cash:
                self.say(f"prize '{name}': cash is {prize.get('cash')}, rules say {rule.cash}")
            eligible = [p for p in self.real if not (one_each and rule.cash and p in cash_winners)]
            if rule.award in holders:
                holder = holders[rule.award]
                candidates = [holder] if holder in eligible else []
            else:
                pool = [p for p in eligible if p not in any_winners] \
                    if rule.award == "draw-without-prize" else eligible
                best = max((self._metric(rule.award, self.cards[p]) for p in pool), default=None)
                candidates = [p for p in pool if self._metric(rule.award, self.cards[p]) == best]
            method = rule.tie_break
            if not candidates and rule.cash:
                # the pot is always paid out: a draw among those without a prize
                candidates = [p for p in eligible if p not in any_winners] or eligible or self.real
                method = "draw-highest"
            winner = prize.get("player")
            if not candidates:
                if winner is not None:
                    self.say(f"prize '{name}' went to {winner}, but nobody can win it")
                continue
            if winner not in candidates:
                why = "the traveler is " + str(holders[rule.award]) if rule.award in holders \
                    else "who is not the best" if winner in self.cards else "who has no score card"
                if winner in cash_winners and one_each and rule.cash:
                    self.say(f"{winner} won a second cash prize '{name}'")
                self.say(f"prize '{name}' went to {winner}, {why}")
                continue
            self._check_tie_break(name, prize, candidates, method)
            any_winners.add(winner)
            if rule.cash:
                cash_winners.add(winner)
        cash_total = round(sum(p["amount"] for p in prizes if p["cash"] and p["player"]) * 100)
        pot = round(rules.prizes.pot_per_player * 100) * len(self.real)
        if rules.prizes.scale_to_pot and cash_total != pot:
            self.say(f"cash prizes pay {cash_total / 100:.2f}, the pot is {pot / 100:.2f}")

    @staticmethod
    def _holder(triggers: list[tuple[int, str]]) -> str | None:
        return max(triggers)[1] if triggers else None

    def _check_tie_break(self, name: str, prize: dict[str, Any], candidates: list[str],
                         method: str) -> None:
        winner, tied, account = prize["player"], prize.get("tied", []), prize.get("tie_break", "")
        if len(candidates) == 1:
            if tied or account:
                self.say(f"prize '{name}': a tie-break is given, but {winner} had no tie")
            return
        if sorted(tied) != sorted(candidates):
            self.say(f"prize '{name}': tied {tied}, the cards tie {candidates}")
        if not account.startswith(method + ":"):
            self.say(f"prize '{name}': settled by '{account.split(':')[0]}', rules say {method}")
            return
        last = account.split(";")[-1]
        if method in ("draw-highest", "draw-lowest"):
            drawn = {p: int(n) for p, n in re.findall(r"(\S+) drew (\d+)", last)}
            pick = max if method == "draw-highest" else min
            ok = set(drawn) == set(candidates) and pick(drawn, key=drawn.__getitem__) == winner
        elif method == "roll-off":
            totals = {p: int(n) for p, n in re.findall(r"(\S+) (\d+)", last.split(":")[-1])}
            top = max(totals.values(), default=0)
            ok = winner in totals and [p for p in totals if totals[p] == top] == [winner]
        else:  # bunco-off: the first to roll three of a kind
            triples = re.findall(r"(\S+) (\d)(\d)(\d)", last)
            ok = [p for p, a, b, c in triples if a == b == c] == [winner]
        if not ok:
            self.say(f"prize '{name}': its tie-break '{account}' does not name {winner} "
                     "the winner")
