def load(torch, auto_class):
    """from_pretrained in the profile's dtype, on DEVICE."""
    model = auto_class.from_pretrained(MODEL, revision=REVISION, dtype=getattr(torch, DTYPE))
    return model.to(DEVICE).eval()


def eager_may_stop_alone():
    """The eager baseline may stop at EAGER_MAX_S by this process's own clock: it is the only one."""
    return True


if __name__ == "__main__":
    try:
        result = main()
    except BaseException as error:  # report every failure, then exit non-zero
        if isinstance(error, KeyboardInterrupt):
            raise
        result = failure(error)
    emit(result)
    sys.exit(0 if result["ok"] else 1)
