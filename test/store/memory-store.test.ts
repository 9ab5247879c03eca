import { openStore } from '../../src/store/open-store.ts';
import { describeStoreConformance } from './store-conformance.ts';

describeStoreConformance('memory', () => openStore('memory:'));
