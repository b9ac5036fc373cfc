"""rulegen.run"""
