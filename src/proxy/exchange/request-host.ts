/**
 * Host header to the name used for listener and virtual-host selection: port removed, lower-case.
 * Undefined when the value is not a valid host (RFC 9110 §7.2 / RFC 3986 reg-name or IP literal): answer 400.
 */
export function hostForMatching(value: string): string | undefined {
  if (value.length === 0) return '';
  if (value.charCodeAt(0) === 91 /* [ */) {
    const close = value.indexOf(']');
    if (close === -1) return undefined;
    const rest = value.slice(close + 1);
    if (rest !== '' && !isPort(rest)) return undefined;
    return value.slice(0, close + 1).toLowerCase();
  }
  let end = value.length;
  const colon = value.indexOf(':');
  if (colon !== -1) {
    if (!isPort(value.slice(colon))) return undefined;
    end = colon;
  }
  let hasUpper = false;
  for (let i = 0; i < end; i++) {
    const c = value.charCodeAt(i);
    if (c >= 97 && c <= 122) continue; // a-z
    if ((c >= 48 && c <= 57) || c === 45 || c === 46 || c === 95) continue; // 0-9 - . _
    if (c >= 65 && c <= 90) {
      hasUpper = true;
      continue;
    }
    return undefined;
  }
  // A fully qualified name's trailing dot names the same host.
  if (end > 0 && value.charCodeAt(end - 1) === 46) end--;
  const host = end === value.length ? value : value.slice(0, end);
  return hasUpper ? host.toLowerCase() : host;
}

/** `:digits`, at most 5 digits. */
function isPort(text: string): boolean {
  if (text.length < 2 || text.length > 6 || text.charCodeAt(0) !== 58) return false;
  for (let i = 1; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c < 48 || c > 57) return false;
  }
  return true;
}
