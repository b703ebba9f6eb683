"""Framework spellings seen in the wild (issue 30, second part): Lightning
Fabric's precision, `Trainer.from_argparse_args`, TRL's configurations and
trainers, fallback arguments of vendored Trainers, project subclasses that
change a default, datasets whose workers would repeat samples, and loaders
Accelerate moves.  Gates are tested on both sides."""

from __future__ import annotations

import pytest

from test_framework_rules import messages


# -- TL602: Lightning Fabric ---------------------------------------------------------------

FABRIC = "from lightning.fabric import Fabric\nfabric = Fabric(accelerator='cuda', precision=32)\n"


@pytest.mark.parametrize(("release", "expected"), [("1.8.6", 0), ("1.9.0", 1), ("2.0.0", 1), ("2.6.5", 1)])
def test_fabric_full_precision_from_1_9(release: str, expected: int) -> None:
    assert len(messages(FABRIC, "TL602", lightning=release)) == expected


def test_fabric_suggests_the_release_spelling_and_leaves_the_launcher_alone() -> None:
    assert "`precision=16`" in messages(FABRIC, "TL602", lightning="1.9.5")[0]
    assert '`precision="16-mixed"`' in messages(FABRIC, "TL602", lightning="2.1")[0]
    assert messages("from lightning.fabric import Fabric\nf = Fabric(accelerator='cuda')\n", "TL602") == []
    assert messages("from lightning.fabric import Fabric\nf = Fabric(accelerator='cpu', precision=32)\n", "TL602") == []
    assert messages("import lightning as L\nf = L.Fabric(accelerator='gpu', precision='16-mixed')\n", "TL602") == []


# -- Trainer.from_argparse_args ------------------------------------------------------------

ARGPARSE = "import pytorch_lightning as pl\ntrainer = pl.Trainer.from_argparse_args(args{extra})\n"


def test_from_argparse_args_reads_only_what_it_writes() -> None:
    assert messages(ARGPARSE.format(extra=""), "TL602", lightning="1.5") == []
    assert messages(ARGPARSE.format(extra=", gpus=2"), "TL602", lightning="1.5") == []
    assert len(messages(ARGPARSE.format(extra=", gpus=2, precision=32"), "TL602", lightning="1.5")) == 1
    assert len(messages(ARGPARSE.format(extra=", distributed_backend='dp'"), "TL501", lightning="1.4.9")) == 1
    assert messages(ARGPARSE.format(extra=""), "TL605", lightning="1.9") == []


def test_gpus_counted_from_the_command_line_are_gpus() -> None:
    source = "import pytorch_lightning as pl\ntrainer = pl.Trainer(gpus=hparams.num_gpus)\n"
    assert len(messages(source, "TL602", lightning="0.7.5")) == 1
    assert messages(source, "TL602", lightning="2.0") == []  # gpus= is gone in 2.0
    assert messages(source.replace("hparams.num_gpus", "0"), "TL602", lightning="1.9") == []


# -- TRL ---------------------------------------------------------------------------------

def test_trl_configurations_are_training_arguments_with_their_own_defaults() -> None:
    sft = "from trl import SFTConfig, SFTTrainer\nconfig = SFTConfig(output_dir='o'{extra})\nSFTTrainer(model, args=config)\n"
    assert len(messages(sft.format(extra=""), "TL201", transformers="4.40")) == 1
    assert messages(sft.format(extra=""), "TL201", transformers="4.8.2") == []  # before the field is known
    assert messages(sft.format(extra=""), "TL602", transformers="4.40") == []  # bf16 on by default in TRL
    assert len(messages(sft.format(extra=", bf16=False"), "TL602", transformers="4.40")) == 1
    assert messages(sft.format(extra=", gradient_checkpointing=True"), "TL705", transformers="4.40") == []
    assert len(messages(sft.format(extra=", dataloader_pin_memory=False"), "TL202", transformers="4.40")) == 1


def test_a_project_dataclass_that_declares_a_field_again_owns_its_default() -> None:
    source = (
        "from dataclasses import dataclass, field\nfrom transformers import TrainingArguments\n"
        "@dataclass\nclass Args(TrainingArguments):\n    bf16: bool = field(default=True)\n"
        "    dataloader_num_workers: int = 4\n"
        "args = Args(output_dir='o', gradient_checkpointing=True)\n"
        "from transformers import Trainer\nTrainer(model=model, args=args).train()\n"
    )
    assert messages(source, "TL602", transformers="4.40") == []
    assert messages(source, "TL201", transformers="4.40") == []
    assert len(messages(source, "TL705", transformers="4.40")) == 1  # gradient_checkpointing_kwargs not declared


# -- fallback arguments --------------------------------------------------------------------

FALLBACK = (
    "from transformers import TrainingArguments\n"
    "class Trainer:\n    def __init__(self, args=None):\n{body}"
    "    def loader_settings(self):\n"
    "        return self.args.dataloader_num_workers, self.args.fp16, self.args.bf16\n"
)


@pytest.mark.parametrize(("body", "expected"), [
    ("        if args is None:\n            args = TrainingArguments(output_dir='tmp')\n", 0),
    ("        if args is None:\n            self.args = TrainingArguments(output_dir='tmp')\n", 0),
    ("        self.args = args or TrainingArguments(output_dir='tmp')\n", 0),
    ("        self.args = TrainingArguments(output_dir='tmp') if args is None else args\n", 0),
    # Not a stand-in for a caller's arguments:
    ("        if args is None:\n            run = TrainingArguments(output_dir='tmp')\n        self.args = run\n", 1),
    ("        self.args = TrainingArguments(output_dir='tmp') if args else None\n", 1),
    ("        other = None\n        if other is None:\n            other = TrainingArguments(output_dir='tmp')\n"
     "        self.args = other\n", 1),
])
def test_a_fallback_for_a_callers_arguments_is_not_read(body: str, expected: int) -> None:
    source = FALLBACK.format(body=body)
    assert len(messages(source, "TL201", transformers="4.40")) == expected
    assert len(messages(source, "TL602", transformers="4.40")) == expected


# -- TL201: workers that would repeat samples ----------------------------------------------

ITERABLE = (
    "import torch\nfrom torch.utils.data import DataLoader, IterableDataset, get_worker_info\n"
    "class Stream(IterableDataset):\n    def __iter__(self):\n{body}"
    "loader = DataLoader(Stream(){extra})\n"
)


@pytest.mark.parametrize(("body", "extra", "expected"), [
    ("        yield from range(10)\n", "", 0),
    ("        info = get_worker_info()\n        yield from range(info.id, 10, info.num_workers)\n", "", 1),
    ("        info = torch.utils.data.get_worker_info()\n        yield from range(10)\n", "", 1),
    ("        yield from range(10)\n", ", worker_init_fn=init", 1),
    ("        yield from range(10)\n", ", num_workers=0", 0),
])
def test_an_iterable_dataset_that_does_not_shard_by_worker_keeps_the_main_process(
        body: str, extra: str, expected: int) -> None:
    assert len(messages(ITERABLE.format(body=body, extra=extra), "TL201")) == expected


def test_a_map_dataset_loader_is_still_reported() -> None:
    source = ("from torch.utils.data import DataLoader, Dataset\nclass Items(Dataset):\n"
              "    def __getitem__(self, i):\n        return i\nloader = DataLoader(Items())\n")
    assert len(messages(source, "TL201")) == 1


# -- TL202: what Accelerate moves ----------------------------------------------------------

PREPARED = (
    "import torch\nfrom accelerate import Accelerator\nfrom torch.utils.data import DataLoader\n"
    "accelerator = Accelerator({accelerator})\n"
    "train = DataLoader(train_set, batch_size=8)\nvalid = DataLoader(valid_set, batch_size=8)\n"
    "model, train, valid = accelerator.prepare(model, train, valid)\n"
)


@pytest.mark.parametrize(("accelerator", "expected"), [
    ("", 2), ("**kwargs", 2), ("cpu=True", 0), ("device_placement=False", 0), ("device_placement=args.place", 0),
    # A `--cpu` flag (Accelerate's own examples) is off unless the run asks for the CPU.
    ("cpu=args.cpu", 2), ("cpu=False", 2), ("cpu=args.cpu, mixed_precision=args.mixed_precision", 2),
])
def test_every_loader_of_one_prepare_call_is_moved_unless_placement_is_written_off(
        accelerator: str, expected: int) -> None:
    assert len(messages(PREPARED.format(accelerator=accelerator), "TL202")) == expected


PROMPTS = (
    "from accelerate import Accelerator\nfrom torch.utils.data import DataLoader, Dataset\n"
    "class Prompts(Dataset):\n    def __init__(self, prompt, n):\n        self.prompt, self.n = prompt, n\n"
    "    def __len__(self):\n        return self.n\n"
    "    def __getitem__(self, index):\n{body}"
    "accelerator = Accelerator()\nloader = accelerator.prepare(DataLoader(Prompts('a cat', 8){extra}))\n"
)


@pytest.mark.parametrize(("body", "extra", "expected"), [
    ("        example = {}\n        example['prompt'] = self.prompt\n        example['index'] = index\n"
     "        return example\n", "", 0),
    ("        return {'prompt': self.prompt, 'index': index}\n", "", 0),
    ("        return self.prompt, index\n", "", 0),
    ("        return {'prompt': self.prompt, 'index': index}\n", ", collate_fn=collate", 1),
    ("        return self.images[index]\n", "", 1),
    ("        return load(self.prompt, index)\n", "", 1),
    ("        if index < 0:\n            index = 0\n        return self.prompt, index\n", "", 1),
])
def test_a_prepared_loader_of_items_without_data_is_left_alone(body: str, extra: str, expected: int) -> None:
    assert len(messages(PROMPTS.format(body=body, extra=extra), "TL202")) == expected


# -- the loaders fact: bindings in a branch may reach the use ----------------------------------

BRANCH_BOUND = (
    "import torch\nfrom torch.utils.data import DataLoader\n"
    "def main(args, a, b):\n"
    "    loader = {first}\n"
    "    if args.other:\n"
    "        loader = DataLoader(b, num_workers=2)\n"
    "{between}"
    "    for x, y in loader:\n"
    "        x = x.cuda()\n"
)


@pytest.mark.parametrize(("first", "between", "expected"), [
    ("None", "", 1),  # only the branch's loader
    ("DataLoader(a, num_workers=2)", "", 2),  # either loader
    ("DataLoader(a, num_workers=2)", "    loader = DataLoader(a, num_workers=2, pin_memory=True)\n", 0),
])
def test_a_loader_bound_in_a_branch_reaches_the_batches_moved_after_it(first: str, between: str,
                                                                     expected: int) -> None:
    assert len(messages(BRANCH_BOUND.format(first=first, between=between), "TL202")) == expected


UNPACKED = (
    "from accelerate import Accelerator\nfrom torch.utils.data import DataLoader\n"
    "def make(a, b):\n"
    "    first = DataLoader(a, num_workers=2)\n"
    "    second = DataLoader(b, num_workers=2, pin_memory=True)\n"
    "    return {returned}\n"
    "def main(a, b):\n"
    "    accelerator = Accelerator()\n"
    "    {targets} = make(a, b)\n"
    "    {prepared} = accelerator.prepare({prepared})\n"
)


@pytest.mark.parametrize(("returned", "targets", "prepared", "expected"), [
    ("first, second", "x, y", "x", 1),  # x holds `first`
    ("first, second", "x, y", "y", 0),  # y holds the pinned `second`
    ("second, first", "x, y", "y", 1),
    ("first, second", "x, *y", "x", 0),  # starred: the file cannot say which
    ("first, second, None", "x, y", "x", 0),  # lengths differ
])
def test_loaders_unpacked_from_a_local_function_s_tuple_by_place(returned: str, targets: str, prepared: str,
                                                                 expected: int) -> None:
    source = UNPACKED.format(returned=returned, targets=targets, prepared=prepared)
    assert len(messages(source, "TL202")) == expected
