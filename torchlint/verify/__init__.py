"""Runtime verification of fixes (needs torch; imported only by `torchlint verify`)."""
