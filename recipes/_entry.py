if __name__ == "__main__":
    try:
        main()
    except BaseException as error:  # report every failure, then exit non-zero
        if isinstance(error, KeyboardInterrupt):
            raise
        emit({"ok": False, "stage": stage, "error_types": error_chain(error),
              "error": "".join(traceback.format_exception(error))[-20000:], "versions": versions()})
        sys.exit(1)
