"""dpaudit's own mechanisms, correct ones and known-broken variants, each registered by name (`dpaudit list`)."""
