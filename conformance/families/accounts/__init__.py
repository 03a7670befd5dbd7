"""The ``accounts`` family (spec/accounts.md, AC-*): Syndicate accounts over actor
graphs. A thin record over the existing engine (``model/accounts/``,
``conformance/families/accounts/explore.py``); its commands are the ``creditflow accounts`` group
(FAM-OPTIONS: ``check``/``prove``/``synth`` take none of its inputs)."""

from creditflow.conformance.family.interface import Family, Part

_HERE = "creditflow.conformance.families.accounts"

#: FAM-INTERFACE: the accounts family
FAMILY = Family(
    name="accounts",
    title="Syndicate accounts: debts, debits and the bound of outstanding work",
    spec_files=("accounts.md",),
    property_ids=(),
    options={},
    reader=Part(f"{_HERE}.reader:READER"),
    checking=Part(f"{_HERE}.checking:CHECKING"),
    preset_folder="graphs/accounts",
)
