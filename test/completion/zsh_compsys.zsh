# zsh -f zsh_compsys.zsh DIR LINE WORD: zsh's own completion system (compinit
# in an interactive zsh in a pseudo-terminal, DIR first in $fpath) completes
# LINE<TAB>; prints what the terminal showed up to WORD's first appearance.
# Exit 3 if the pty ends without WORD (the caller's timeout bounds the wait).
zmodload zsh/zpty || exit 2
zpty z zsh -f -i
zpty -w z "PS1='> '; fpath=(${(q)1} \$fpath); autoload -Uz compinit; compinit -u -D; LISTMAX=1000"
zpty -w -n z "$2"$'\t'
local out
zpty -r z out "*$3*" || exit 3
print -r -- "$out" | tr -d '\r' | sed 's/\x1b\[[0-9;?]*[a-zA-Z]//g'
zpty -d z
