import type { GeneratedPhotoSpec } from './example-photo-renderer.ts';

/**
 * Six photos with large text for OCR, EXIF wall-clock time in Lisbon/Porto summer time (+01:00) and GPS.
 * Built-in relations: parking + studio sign (21 min, ~100 m) and Lello + Majestic receipt (45 min, ~0.7 km)
 * are event_bridge pairs; the studio sign (14 April) and the train ticket (20 April) are taken on dates
 * that emails state, with shared words, for record_grounding.
 */
export const EXAMPLE_PHOTOS: { name: string; spec: GeneratedPhotoSpec }[] = [
  {
    name: 'garden-whiteboard.jpg',
    spec: {
      title: 'GARDEN PLAN',
      lines: [
        'BED 1: LETTUCE + RADISH',
        'BED 2: TOMATOES',
        'BED 3: BASIL + PARSLEY',
        'WATER: TUE + FRI EVENING',
      ],
      takenAt: '2024-04-06T17:20:00',
      offset: '+01:00',
      lat: 38.75312,
      lon: -9.14405,
      background: '#fbfbf8',
    },
  },
  {
    name: 'riverside-car-park.jpg',
    spec: {
      title: 'RIVERSIDE CAR PARK',
      lines: ['LEVEL -2', 'BAY 214', 'PAY AT MACHINE BEFORE EXIT'],
      takenAt: '2024-04-14T13:42:00',
      offset: '+01:00',
      lat: 38.70498,
      lon: -9.16012,
      background: '#f5e9a8',
    },
  },
  {
    name: 'pottery-studio-sign.jpg',
    spec: {
      title: 'RIVERSIDE ARTS CENTRE',
      lines: ['STUDIO 5 - FIRST FLOOR', 'POTTERY WORKSHOP', 'SUNDAY 14:00 - 17:00'],
      takenAt: '2024-04-14T14:03:00',
      offset: '+01:00',
      lat: 38.70561,
      lon: -9.1593,
      background: '#e3eef7',
    },
  },
  {
    name: 'train-ticket.jpg',
    spec: {
      title: 'CP ALFA PENDULAR 121',
      lines: [
        'LISBOA SANTA APOLONIA > PORTO CAMPANHA',
        '20 APR 2024  DEP 08:39',
        'COACH 4  SEAT 52',
        'BOOKING PX7Q42',
      ],
      takenAt: '2024-04-20T08:31:00',
      offset: '+01:00',
      lat: 38.71369,
      lon: -9.12271,
      background: '#eaf4e4',
      width: 1150,
    },
  },
  {
    name: 'livraria-lello.jpg',
    spec: {
      title: 'LIVRARIA LELLO',
      lines: ['OPEN 09:30 - 19:00', 'VOUCHER EUR 10', 'DEDUCTED FROM ANY BOOK'],
      takenAt: '2024-04-20T12:10:00',
      offset: '+01:00',
      lat: 41.14688,
      lon: -8.61485,
      background: '#f3e4d7',
    },
  },
  {
    name: 'majestic-receipt.jpg',
    spec: {
      title: 'MAJESTIC CAFE',
      lines: ['RUA SANTA CATARINA 112', '2 x PASTEL DE NATA  6.00', '2 x GALAO  5.20', 'TOTAL EUR 11.20'],
      takenAt: '2024-04-20T12:55:00',
      offset: '+01:00',
      lat: 41.14717,
      lon: -8.60627,
      background: '#ffffff',
    },
  },
];
