/**
 * A path or setting that is empty or only spaces: never meant as a name (an unset or mistyped
 * shell variable), so it is refused, or taken as unset, rather than made into a file called " ".
 */
export function isBlank(value: string | undefined): value is undefined | '' {
  return value === undefined || value.trim() === '';
}
