"""Dictionaries unpacked into calls: which keywords ``**kw`` passes, when certain."""

from __future__ import annotations

from typing import Dict, Optional, Tuple

import libcst as cst

from torchlint.data import apidata
from torchlint.analysis import Facts
from torchlint.ruleapi.fixes import bind

SOURCE = '''
literal = {"batch_size": 4, "pin_memory": True}
called = dict(num_workers=8)
changed = dict(num_workers=8)
changed["pin_memory"] = True
passed = {"a": 1}
configure(passed)
twice = {"a": 1}
twice = {"b": 2}
computed = {key: 1}
chained = first = {"a": 1}
DataLoader(ds, **literal)
DataLoader(ds, **called)
DataLoader(ds, **changed)
DataLoader(ds, **passed)
DataLoader(ds, **twice)
DataLoader(ds, **computed)
DataLoader(ds, **chained)
DataLoader(ds, **{"num_workers": 2, **base})
DataLoader(ds, **dict(base, num_workers=2))
def f(**options):
    DataLoader(ds, **options)
def main(use_cuda):
    train_kwargs = {"batch_size": 64}
    if use_cuda:
        cuda_kwargs = {"num_workers": 1, "pin_memory": True}
        train_kwargs.update(cuda_kwargs)
    DataLoader(ds, **train_kwargs)
    workers = dict(num_workers=1)
    if use_cuda:
        workers["num_workers"] = 4
    DataLoader(ds, **workers)
    shared = {"num_workers": 1}
    tweak(shared)
    DataLoader(ds, **shared)
'''


def _splats() -> Tuple[cst.Module, Dict[str, Optional[Dict[str, str]]]]:
    """Each unpacked expression's keys: ``key`` for a key on every path,
    ``key?`` for one on some paths (or with values that differ by path)."""
    module = cst.parse_module(SOURCE)
    facts = Facts.of_module(module, source=SOURCE)
    found: Dict[str, Optional[Dict[str, str]]] = {}
    for call in facts.nodes_of(cst.Call):
        for arg in call.args:
            if arg.star == "**":
                keys = facts.values.splatted(arg.value)
                found[module.code_for_node(arg.value)] = None if keys is None else {
                    **{k: module.code_for_node(v) for k, v in keys.certain.items()},
                    **{f"{k}?": " | ".join(sorted(module.code_for_node(v) for v in vs)) for k, vs in keys.maybe.items()},
                }
    return module, found


def test_the_keywords_of_a_dict_unpacked_into_a_call() -> None:
    _, found = _splats()
    assert found["literal"] == {"batch_size": "4", "pin_memory": "True"}
    assert found["called"] == {"num_workers": "8"}
    assert found["changed"] == {"num_workers": "8", "pin_memory": "True"}  # `changed["pin_memory"] = True`
    assert found["twice"] == {"b": "2"}  # the binding that reaches the call
    for unknown in ("passed", "computed", "chained", "options", "shared"):
        assert found[unknown] is None, unknown  # passed on, not a display, two names, a parameter
    assert found['{"num_workers": 2, **base}'] is None
    assert found["dict(base, num_workers=2)"] is None


def test_keys_a_branch_adds_may_be_passed() -> None:
    _, found = _splats()
    assert found["train_kwargs"] == {"batch_size": "64", "num_workers?": "1", "pin_memory?": "True"}
    assert found["workers"] == {"num_workers?": "1 | 4"}


def test_binding_a_call_reads_the_unpacked_keywords() -> None:
    module = cst.parse_module(SOURCE)
    facts = Facts.of_module(module, source=SOURCE)
    calls = [c for c in facts.nodes_of(cst.Call) if any(a.star == "**" for a in c.args)]
    signature = apidata.signature("torch.utils.data.DataLoader")
    known = bind(calls[0], signature, None, facts.values.splatted)
    pinned = known.argument("pin_memory")
    assert pinned is not None and module.code_for_node(pinned.value) == "True"
    assert known.splatted == {"batch_size", "pin_memory"} and not known.may_be_present("num_workers")
    unknown = bind(calls[3], signature, None, facts.values.splatted)
    assert unknown.argument("pin_memory") is None and unknown.may_be_present("pin_memory")
    branch = next(c for c in calls if module.code_for_node(c.args[-1].value) == "train_kwargs")
    sometimes = bind(branch, signature, None, facts.values.splatted)
    assert sometimes.argument("pin_memory") is None and sometimes.may_be_present("pin_memory")
    assert [module.code_for_node(v) for v in sometimes.possible["pin_memory"]] == ["True"]
    assert not sometimes.may_be_present("persistent_workers")
    assert bind(calls[0], signature).may_be_present("num_workers")  # without the fact: anything may be passed
