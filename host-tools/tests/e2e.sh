#!/bin/bash
echo "e2e: placeholder"; exit 0
