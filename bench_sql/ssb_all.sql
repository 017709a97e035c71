@ssb/q*.sql
