// Who a planned window's freezes are by (issue 43): the console, on behalf of the window; read back wherever a
// freeze shows (the card's badge, the release chain's "held by window …"). No imports: the SPA's first chunk uses it.

/** The name a window's freezes carry as their actor (`freeze.by`): the console, on behalf of the window. */
export function windowActorName(window: string): string {
  return `console (window ${window})`;
}

/** The window a freeze was started by, read back from its actor (undefined: a person's freeze). */
export function windowOfActor(by: string): string | undefined {
  return /^console \(window ([a-z0-9][-a-z0-9]*)\)$/.exec(by)?.[1];
}
