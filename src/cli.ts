#!/usr/bin/env node
import { VERSION } from './version.js';

const args = process.argv.slice(2);
if (args.includes('--version')) {
  console.log(VERSION);
} else {
  console.log('usage: isa-monitor <run|check|simulate|validate-config> [options]');
}
