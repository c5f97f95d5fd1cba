if __name__ == "__main__":
    try:
        main()
    except BaseException as error:  # report every failure, then exit non-zero
        if isinstance(error, KeyboardInterrupt):
            if RANKS:
                RANKS.stop()
            raise
        if isinstance(error, SystemExit) and stage == "reported":
            raise
        failure = {"ok": False, "stage": stage, "error_types": error_chain(error), "at": time.time(),
                   "error": "".join(traceback.format_exception(error))[-20000:]}
        if RANKS:  # sharded: the first failure of any rank is the one to report
            failure = RANKS.first_failure(own={**failure, "rank": 0})
        emit({**failure, "versions": versions()})
        sys.exit(1)
