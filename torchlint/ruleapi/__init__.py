"""What a rule is and what it works with: the rule base (``rule``) and its metadata types
(``meta``), the catalog and registry of rules, the pre-check facts a rule's ``could_match`` reads,
what suppression comments say (``directives``), the fix toolkit (``fixes``) and verification specs."""
