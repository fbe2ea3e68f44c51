package session

import "syscall"

func syscallUmask(m int) int { return syscall.Umask(m) }
