from tutor.cli import main

main()
