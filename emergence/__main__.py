from emergence.cli import main

raise SystemExit(main())
