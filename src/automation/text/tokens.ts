/**
 * Shared text handling of the local text analysis: the words of a message (lowercased, with
 * apostrophes kept so "can't" stays one word), and the parts of an email that are not what the
 * customer wrote now (quoted replies, signatures).
 */
export function words(text: string): string[] {
  return text.toLowerCase().replace(/[’‘]/g, "'").match(/[\p{L}\p{N}]+(?:'[\p{L}]+)?/gu) ?? [];
}

/** The message without quoted lines (`> …`), the quoted tail of a reply, or the signature after `-- `. */
export function ownText(body: string): string {
  const lines: string[] = [];
  for (const line of body.replace(/\r\n?/g, '\n').split('\n')) {
    if (/^\s*--\s*$/.test(line) || /^\s*On .{4,200} wrote:\s*$/.test(line) || /^-{2,}\s*Original Message/i.test(line)) break;
    if (/^\s*>/.test(line)) continue;
    lines.push(line);
  }
  return lines.join('\n').trim();
}

export const STOPWORDS = new Set(`a about above after again against all am an and any are as at be because been before being below
between both but by can could did do does doing down during each few for from further had has have having he her here hers
herself him himself his how i if in into is it its itself just me more most my myself no nor not now of off on once only or
other our ours ourselves out over own same she should so some such than that the their theirs them themselves then there these
they this those through to too under until up very was we were what when where which while who whom why will with would you
your yours yourself yourselves hi hello hey dear thanks thank regards best cheers please team support also get got still
it's i'm i've i'd we're don't can't cannot won't isn't doesn't didn't`.split(/\s+/));
