"""A rule's equivalence contract, looked up by code, for verify's reports.

The contracts themselves are data in each rule's verification spec (see
``torchlint/verification.py``); a rule without one gets the generic "close".
"""

from __future__ import annotations

from torchlint.registry import by_code_or_name
from torchlint.verification import Contract, contract_of


def contract_for(code: str) -> Contract:
    """The contract of the rule with this code or name, or the generic one."""
    return contract_of(by_code_or_name(code))
