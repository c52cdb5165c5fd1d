package main

import "errors"

func live(args []string) error { return errors.New("not yet") }
