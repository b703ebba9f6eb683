"""A rule's equivalence contract, looked up by code, for verify's reports.

The contracts themselves are data in each rule's verification spec (see
``torchlint/ruleapi/verification.py``); a rule without one gets the generic "close".
"""

from __future__ import annotations

from torchlint.ruleapi.registry import by_code_or_name
from torchlint.ruleapi.verification import STRICT_CONTRACT, Contract, contract_of

SAME_OUTPUTS = "same outputs"
"""What a case checked with no rule (``verify A --against B`` without ``--rules``) is called."""
NO_RULE = "-"
"""The rule column of such a case."""


def contract_for(code: str) -> Contract:
    """The contract of the rule with this code or name; the strict "same outputs"
    contract for no rule (``NO_RULE``); the generic one for a rule without its own."""
    if code in ("", NO_RULE):
        return STRICT_CONTRACT
    return contract_of(by_code_or_name(code))
