# bash completion for gcscale (installed by `make install` as
# PREFIX/share/bash-completion/completions/gcscale).
#
# The commands and each command's options are read from the program's own
# help (`gcscale --help`, `gcscale COMMAND --help`) the first time they are
# needed, so the completion never falls behind the program.  Values of
# options that name files complete as files; the rest as words.

_gcscale_help_cache_cmds=""
declare -A _gcscale_help_cache_opts 2>/dev/null

_gcscale_commands()
{
    if [ -z "$_gcscale_help_cache_cmds" ]; then
        _gcscale_help_cache_cmds=$("${1:-gcscale}" --help 2>/dev/null |
            sed -n '/^commands:/,/^$/s/^  \([a-z][a-z-]*\) .*/\1/p' | tr '\n' ' ')
    fi
    printf '%s' "$_gcscale_help_cache_cmds"
}

_gcscale_options()
{
    local prog=$1 cmd=$2
    if [ -z "${_gcscale_help_cache_opts[$cmd]:-}" ]; then
        _gcscale_help_cache_opts[$cmd]=$("$prog" "$cmd" --help 2>/dev/null |
            grep -oE '(^|[ ,\[])--[a-z][a-z0-9-]*' | sed 's/^[ ,\[]//' | sort -u | tr '\n' ' ')
    fi
    printf '%s' "${_gcscale_help_cache_opts[$cmd]}"
}

_gcscale()
{
    local cur prev prog cmd
    cur=${COMP_WORDS[COMP_CWORD]}
    prev=${COMP_WORDS[COMP_CWORD-1]}
    prog=${COMP_WORDS[0]}
    COMPREPLY=()
    if [ "$COMP_CWORD" -eq 1 ]; then
        COMPREPLY=($(compgen -W "$(_gcscale_commands "$prog") --help --version" -- "$cur"))
        return
    fi
    cmd=${COMP_WORDS[1]}
    case $prev in
        -o|--output|--machine|-m|--snapshot|--snapshot-out|--plot|--svg|--measured|--trace|--log|--floor|--write-floor|--cache)
            COMPREPLY=($(compgen -f -- "$cur"))
            return ;;
    esac
    if [[ $cur == -* ]]; then
        COMPREPLY=($(compgen -W "$(_gcscale_options "$prog" "$cmd")" -- "$cur"))
    else
        COMPREPLY=($(compgen -f -- "$cur"))
    fi
}
complete -o filenames -F _gcscale gcscale
