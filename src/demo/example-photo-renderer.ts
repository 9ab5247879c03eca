import sharp, { type Exif } from 'sharp';

/** One generated photo: readable text on a plain card, with EXIF capture time and GPS written in. */
export interface GeneratedPhotoSpec {
  /** Large first line (bold). */
  title: string;
  /** Further lines, smaller. Keep them short: one line each, no wrapping. */
  lines: string[];
  /** EXIF wall-clock capture time, "YYYY-MM-DDTHH:MM:SS" (no offset: EXIF stores local time). */
  takenAt?: string;
  /** EXIF OffsetTimeOriginal, e.g. "+01:00". */
  offset?: string;
  lat?: number;
  lon?: number;
  /** Card colour (CSS colour); text is always near-black so OCR reads it. */
  background?: string;
  width?: number;
}

const FONT = 'DejaVu Sans';

/**
 * Renders a JPEG from SVG (sharp + librsvg, font DejaVu Sans) and writes EXIF through sharp's `withExif`.
 * Deterministic: the same spec gives the same bytes on the same sharp/libvips build.
 */
export async function renderPhotoJpeg(spec: GeneratedPhotoSpec): Promise<Buffer> {
  const svg = photoSvg(spec);
  return sharp(Buffer.from(svg))
    .flatten({ background: '#ffffff' })
    .jpeg({ quality: 88 })
    .withExif(exifTags(spec))
    .toBuffer();
}

/** The same card as a PNG without any EXIF (screenshots, scans). */
export async function renderPhotoPng(spec: GeneratedPhotoSpec): Promise<Buffer> {
  return sharp(Buffer.from(photoSvg(spec)))
    .flatten({ background: '#ffffff' })
    .png()
    .toBuffer();
}

function photoSvg(spec: GeneratedPhotoSpec): string {
  const width = spec.width ?? 1000;
  const titleSize = 64;
  const lineSize = 46;
  const lineGap = 78;
  const height = 140 + titleSize + spec.lines.length * lineGap + 60;
  const background = spec.background ?? '#f6f1e4';
  const parts: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}">`,
    // A darker surround with a lit card: looks like a photographed object, keeps contrast high for OCR.
    `<rect width="${width}" height="${height}" fill="#5b5f66"/>`,
    `<rect x="30" y="30" width="${width - 60}" height="${height - 60}" rx="18" fill="${background}"/>`,
    `<text x="70" y="${70 + titleSize + 20}" font-family="${FONT}" font-weight="bold" font-size="${titleSize}" fill="#111111">${escapeXml(spec.title)}</text>`,
  ];
  spec.lines.forEach((line, index) => {
    const y = 70 + titleSize + 20 + (index + 1) * lineGap + 10;
    parts.push(
      `<text x="70" y="${y}" font-family="${FONT}" font-size="${lineSize}" fill="#161616">${escapeXml(line)}</text>`,
    );
  });
  parts.push('</svg>');
  return parts.join('');
}

/** EXIF tags in sharp's string form: IFD0 camera, IFD2 (Exif) times, IFD3 GPS as DMS rationals. */
function exifTags(spec: GeneratedPhotoSpec): Exif {
  const exif: Exif = { IFD0: { Make: 'GraphMemix', Model: 'Example Camera' } };
  if (spec.takenAt !== undefined) {
    const stamp = spec.takenAt.replace('T', ' ').replace(/^(\d{4})-(\d{2})-(\d{2})/, '$1:$2:$3');
    exif.IFD2 = { DateTimeOriginal: stamp };
    if (spec.offset !== undefined) exif.IFD2.OffsetTimeOriginal = spec.offset;
  }
  if (spec.lat !== undefined && spec.lon !== undefined) {
    exif.IFD3 = {
      GPSLatitudeRef: spec.lat < 0 ? 'S' : 'N',
      GPSLatitude: toDmsRationals(spec.lat),
      GPSLongitudeRef: spec.lon < 0 ? 'W' : 'E',
      GPSLongitude: toDmsRationals(spec.lon),
    };
  }
  return exif;
}

/** 38.7223 -> "38/1 43/1 2028/100" (degrees, minutes, hundredths of seconds). */
export function toDmsRationals(decimal: number): string {
  const value = Math.abs(decimal);
  // Work in whole hundredths of a second so rounding can never produce "60 seconds".
  const total = Math.round(value * 3600 * 100);
  const degrees = Math.floor(total / 360000);
  const minutes = Math.floor((total % 360000) / 6000);
  const hundredths = total % 6000;
  return `${degrees}/1 ${minutes}/1 ${hundredths}/100`;
}

function escapeXml(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}
