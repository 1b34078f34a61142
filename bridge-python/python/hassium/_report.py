"""Human-readable text for ``stats()`` and ``info()`` (``HASSIUM_STATS=1``, ``--info``)."""


def _lines(value, indent=""):
    if isinstance(value, dict):
        for key, item in value.items():
            if isinstance(item, (dict, list)) and item:
                yield f"{indent}{key}:"
                yield from _lines(item, indent + "  ")
            else:
                yield f"{indent}{key}: {item}"
    elif isinstance(value, list):
        for item in value:
            if isinstance(item, dict):
                first = True
                for line in _lines(item, indent + "  "):
                    yield (indent + "- " + line[len(indent) + 2 :]) if first else line
                    first = False
            else:
                yield f"{indent}- {item}"
    else:
        yield f"{indent}{value}"


def format_stats(stats):
    """``hassium.stats()`` as aligned ``key: value`` lines under a header."""
    return "\n".join(["hassium stats:", *_lines(stats, "  ")])


def format_info(info):
    """``hassium.info()`` as the text ``python -m hassium --info`` prints.

    The well-known keys come first in a fixed order (config source, stack in force,
    stacks, engines, OpenCL devices, cache directory); any other key the extension
    reports follows, so new fields show up without a change here.
    """
    order = [
        ("config", "config"),
        ("config_source", "config source"),
        ("stack", "stack in force"),
        ("running_stack", "stack running"),
        ("running_engine", "engine running"),
        ("flush_threshold", "flush threshold"),
        ("small_flush_threshold", "flush threshold, small arrays"),
        ("small_skip_filters", "filters skipped, small arrays"),
        ("stacks", "stacks"),
        ("engines", "engines found"),
        ("engine_dirs", "engine search path"),
        ("opencl_devices", "OpenCL devices"),
        ("cluster", "cluster"),
        ("cache_dir", "cache directory"),
        ("cache_dirs", "cache directories"),
    ]
    lines = ["hassium info:"]
    seen = set()
    for key, label in order:
        if key in info:
            seen.add(key)
            lines.extend(_lines({label: info[key]}, "  "))
    rest = {k: v for k, v in info.items() if k not in seen}
    if rest:
        lines.extend(_lines(rest, "  "))
    return "\n".join(lines)
