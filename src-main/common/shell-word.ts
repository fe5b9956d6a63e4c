/** A word as a POSIX shell reads it back unchanged: as it is when it holds only safe characters, else in single quotes. */
export function shellWord(word: string): string {
  return /^[\w.,/=@%+:-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`;
}
