"""The layers' folders (docs/architecture.md): what each exports the same."""

def layer_sources():
    """Every C source and header of the package, as :sources.

    For the plain helper build (//helper:plain_helper) and
    //tests:includes_test, which holds each #include to its layer.
    """
    native.filegroup(
        name = "sources",
        srcs = native.glob(["*.c", "*.h"]),
        visibility = [
            "//helper:__pkg__",
            "//tests:__pkg__",
        ],
    )
