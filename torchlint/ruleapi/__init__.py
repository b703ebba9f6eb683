"""What a rule is and what it works with: the rule base and its metadata types, the catalog and registry
of rules, the fix toolkit and edits, argument matching, API facts as data, versions, verification specs."""
