// fast-decode-uri-component (no types of its own): what service/http/query.ts uses.
declare module 'fast-decode-uri-component' {
  /** `text` percent-decoded as UTF-8, or null when it does not decode. */
  export default function decode(text: string): string | null;
}
